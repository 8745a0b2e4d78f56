"""A small detection-style model with the graph breaks people hit most often.

`breakscan examples/model.py` lints it, runs the targets declared at the bottom under
TorchDynamo, and shows which breaks are real and how to remove each.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def normalise(scores):
    total = scores.sum().item()
    return scores / total


class Head(nn.Module):
    def __init__(self, channels: int = 32, classes: int = 4):
        super().__init__()
        self.proj = nn.Linear(channels, channels)
        self.cls = nn.Linear(channels, classes)

    def forward(self, features):
        hidden = F.relu(self.proj(features))
        logits = self.cls(hidden)
        if logits.max() > 10:
            logits = logits / 10
        return logits


class Detector(nn.Module):
    def __init__(self, channels: int = 32):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(16, channels), nn.GELU(), nn.Linear(channels, channels))
        self.head = Head(channels)
        self.threshold = 0.5

    def forward(self, x):
        features = self.backbone(x)
        logits = self.head(features)
        scores = normalise(logits.softmax(-1).amax(-1))
        print("scores computed")
        keep = torch.nonzero(scores > self.threshold / scores.numel())
        if features.shape[0] > 1:
            features = features * 2
        return features[keep.squeeze(-1)], logits


BREAKSCAN_TARGETS = {
    "Detector()": "torch.randn(8, 16)",
    "Head()": "torch.randn(8, 32)",
}
