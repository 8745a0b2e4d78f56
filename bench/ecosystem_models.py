"""The models `bench/ecosystem.py` runs: small random-weight models built from each library's own
configs and constructors (nothing is downloaded), with inputs, each a few seconds on CPU.

Imported only by the worker, inside the ecosystem venv where the libraries are installed. A spec's
`build()` returns `(callable, args, kwargs)`; it is called after `torch.manual_seed(0)`, so the
eager run and the TorchDynamo run see the same weights and the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

Built = tuple[Callable[..., Any], tuple, dict]


@dataclass(frozen=True)
class Spec:
    name: str
    build: Callable[[], Built]
    train: bool = False  # run in training mode with gradients (e.g. codebook updates), else eval + no_grad


def _tokens(vocab: int = 100, batch: int = 2, length: int = 8) -> torch.Tensor:
    return torch.randint(0, vocab, (batch, length))


# transformers ------------------------------------------------------------------------------------

_TINY_LM = dict(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)


def _causal_lm(config_name: str, model_name: str, **extra: Any) -> Built:
    import transformers

    config = getattr(transformers, config_name)(**{**_TINY_LM, **extra})
    model = getattr(transformers, model_name)(config)
    return model, (), {"input_ids": _tokens()}


def _bert() -> Built:
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=64)
    ids = _tokens()
    return BertForSequenceClassification(config), (), {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def _gpt2() -> Built:
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=64)
    return GPT2LMHeadModel(config), (), {"input_ids": _tokens()}


def _t5() -> Built:
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                      decoder_start_token_id=0)
    return T5ForConditionalGeneration(config), (), {"input_ids": _tokens(), "decoder_input_ids": _tokens(length=4)}


def _bart() -> Built:
    from transformers import BartConfig, BartForConditionalGeneration

    config = BartConfig(vocab_size=100, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                        max_position_embeddings=64)
    return BartForConditionalGeneration(config), (), {"input_ids": _tokens(), "decoder_input_ids": _tokens(length=4)}


def _vit() -> Built:
    from transformers import ViTConfig, ViTForImageClassification

    config = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=2,
                       num_attention_heads=4, intermediate_size=64, num_labels=10)
    return ViTForImageClassification(config), (), {"pixel_values": torch.randn(2, 3, 32, 32)}


def _clip() -> Built:
    from transformers import CLIPConfig, CLIPModel

    text = dict(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                max_position_embeddings=16)
    vision = dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4)
    model = CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=16))
    return model, (), {"input_ids": _tokens(), "pixel_values": torch.randn(2, 3, 32, 32)}


def _whisper() -> Built:
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    config = WhisperConfig(vocab_size=100, num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=2,
                           encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                           decoder_ffn_dim=64, max_source_positions=16, max_target_positions=16,
                           decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, bos_token_id=0)
    features = torch.randn(2, 16, 32)  # 2 x max_source_positions frames, halved by the conv stride
    return WhisperForConditionalGeneration(config), (), {"input_features": features,
                                                        "decoder_input_ids": _tokens(length=4)}


def _big_bird() -> Built:
    from transformers import BigBirdConfig, BigBirdModel

    # block_sparse attention needs sequences longer than (5 + 2 * random blocks) blocks
    config = BigBirdConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=64, max_position_embeddings=256, attention_type="block_sparse",
                           block_size=4, num_random_blocks=2)
    return BigBirdModel(config), (), {"input_ids": _tokens(length=64)}


def _longformer() -> Built:
    from transformers import LongformerConfig, LongformerModel

    config = LongformerConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                              intermediate_size=64, max_position_embeddings=80, attention_window=8)
    return LongformerModel(config), (), {"input_ids": _tokens(length=20)}


def _reformer() -> Built:
    from transformers import ReformerConfig, ReformerModelWithLMHead

    config = ReformerConfig(vocab_size=100, hidden_size=32, num_attention_heads=2, attention_head_size=16,
                            feed_forward_size=64, attn_layers=["local", "lsh"], axial_pos_shape=(4, 4),
                            axial_pos_embds_dim=(16, 16), max_position_embeddings=16, local_attn_chunk_length=4,
                            lsh_attn_chunk_length=4, num_buckets=2, is_decoder=True)
    return ReformerModelWithLMHead(config), (), {"input_ids": _tokens(length=16)}


def _deberta_v2() -> Built:
    from transformers import DebertaV2Config, DebertaV2Model

    config = DebertaV2Config(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=64, max_position_embeddings=64, relative_attention=True,
                             position_buckets=16, pos_att_type=["p2c", "c2p"])
    return DebertaV2Model(config), (), {"input_ids": _tokens()}


def _switch_transformers() -> Built:
    from transformers import SwitchTransformersConfig, SwitchTransformersForConditionalGeneration

    config = SwitchTransformersConfig(vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                                      num_decoder_layers=2, num_heads=4, num_experts=4, expert_capacity=8,
                                      decoder_start_token_id=0)
    ids = _tokens()
    # with no mask its compiling path subscripts None (transformers 5.23); a mask is what real inputs have
    return SwitchTransformersForConditionalGeneration(config), (), {
        "input_ids": ids, "attention_mask": torch.ones_like(ids), "decoder_input_ids": _tokens(length=4)}


TRANSFORMERS = [
    Spec("llama", partial(_causal_lm, "LlamaConfig", "LlamaForCausalLM")),
    Spec("mistral", partial(_causal_lm, "MistralConfig", "MistralForCausalLM")),
    Spec("qwen2", partial(_causal_lm, "Qwen2Config", "Qwen2ForCausalLM")),
    Spec("mixtral", partial(_causal_lm, "MixtralConfig", "MixtralForCausalLM", num_local_experts=4,
                            num_experts_per_tok=2)),
    Spec("gpt2", _gpt2),
    Spec("bert", _bert),
    Spec("t5", _t5),
    Spec("bart", _bart),
    Spec("vit", _vit),
    Spec("clip", _clip),
    Spec("whisper", _whisper),
    Spec("big_bird", _big_bird),
    Spec("longformer", _longformer),
    Spec("reformer", _reformer),
    Spec("deberta_v2", _deberta_v2),
    Spec("switch_transformers", _switch_transformers),
]


# diffusers ---------------------------------------------------------------------------------------

def _unet2d() -> Built:
    from diffusers import UNet2DModel

    model = UNet2DModel(sample_size=16, in_channels=3, out_channels=3, block_out_channels=(32, 64),
                        down_block_types=("DownBlock2D", "AttnDownBlock2D"),
                        up_block_types=("AttnUpBlock2D", "UpBlock2D"), layers_per_block=1, norm_num_groups=8,
                        attention_head_dim=8)
    return model, (torch.randn(2, 3, 16, 16), torch.tensor([10, 20])), {}


def _unet2d_condition() -> Built:
    from diffusers import UNet2DConditionModel

    model = UNet2DConditionModel(sample_size=16, in_channels=4, out_channels=4, block_out_channels=(32, 64),
                                 down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                                 up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), layers_per_block=1,
                                 cross_attention_dim=32, attention_head_dim=8, norm_num_groups=8)
    return model, (torch.randn(2, 4, 16, 16), torch.tensor(10), torch.randn(2, 6, 32)), {}


def _autoencoder_kl() -> Built:
    from diffusers import AutoencoderKL

    model = AutoencoderKL(in_channels=3, out_channels=3, block_out_channels=(16, 32),
                          down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
                          up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"), latent_channels=4,
                          norm_num_groups=8, layers_per_block=1, sample_size=16)
    return model, (torch.randn(1, 3, 16, 16),), {}


def _vq_model() -> Built:
    from diffusers import VQModel

    model = VQModel(in_channels=3, out_channels=3, block_out_channels=(16, 32),
                    down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
                    up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"), latent_channels=4,
                    norm_num_groups=8, layers_per_block=1, num_vq_embeddings=16, vq_embed_dim=4)
    return model, (torch.randn(1, 3, 16, 16),), {}


def _dit() -> Built:
    from diffusers import DiTTransformer2DModel

    model = DiTTransformer2DModel(num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=4,
                                  num_layers=2, sample_size=8, patch_size=2, num_embeds_ada_norm=10,
                                  norm_num_groups=8)
    return model, (torch.randn(2, 4, 8, 8),), {"timestep": torch.tensor([1, 2]), "class_labels": torch.tensor([0, 1])}


def _sd3() -> Built:
    from diffusers import SD3Transformer2DModel

    model = SD3Transformer2DModel(sample_size=8, patch_size=2, in_channels=4, out_channels=4, num_layers=2,
                                  attention_head_dim=8, num_attention_heads=2, joint_attention_dim=32,
                                  caption_projection_dim=16, pooled_projection_dim=16, pos_embed_max_size=16)
    return model, (), {"hidden_states": torch.randn(2, 4, 8, 8), "encoder_hidden_states": torch.randn(2, 6, 32),
                       "pooled_projections": torch.randn(2, 16), "timestep": torch.tensor([1, 2])}


def _flux() -> Built:
    from diffusers import FluxTransformer2DModel

    model = FluxTransformer2DModel(patch_size=1, in_channels=16, num_layers=1, num_single_layers=1,
                                   attention_head_dim=16, num_attention_heads=2, joint_attention_dim=32,
                                   pooled_projection_dim=16, axes_dims_rope=(4, 6, 6))
    tokens, text = 16, 6
    return model, (), {"hidden_states": torch.randn(1, tokens, 16), "encoder_hidden_states": torch.randn(1, text, 32),
                       "pooled_projections": torch.randn(1, 16), "timestep": torch.tensor([0.5]),
                       "img_ids": torch.zeros(tokens, 3), "txt_ids": torch.zeros(text, 3)}


def _scheduler_step(name: str) -> Built:
    import diffusers

    scheduler = getattr(diffusers, name)(num_train_timesteps=100)
    scheduler.set_timesteps(10)
    timestep = scheduler.timesteps[0]

    def step(output: torch.Tensor, sample: torch.Tensor) -> torch.Tensor:
        return scheduler.step(output, timestep, sample).prev_sample

    return step, (torch.randn(1, 4, 8, 8), torch.randn(1, 4, 8, 8)), {}


DIFFUSERS = [
    Spec("unet2d", _unet2d),
    Spec("unet2d_condition", _unet2d_condition),
    Spec("autoencoder_kl", _autoencoder_kl),
    Spec("vq_model", _vq_model),
    Spec("dit", _dit),
    Spec("sd3_transformer", _sd3),
    Spec("flux_transformer", _flux),
    Spec("ddim_step", partial(_scheduler_step, "DDIMScheduler")),
    Spec("euler_step", partial(_scheduler_step, "EulerDiscreteScheduler")),
]


# kornia ------------------------------------------------------------------------------------------

def _image(batch: int = 2, channels: int = 3, size: int = 32) -> torch.Tensor:
    return torch.rand(batch, channels, size, size)


def _kornia_function(dotted: str, *args: Any, channels: int = 3, **kwargs: Any) -> Built:
    import importlib

    module, name = dotted.rsplit(".", 1)
    function = getattr(importlib.import_module(module), name)

    def call(image: torch.Tensor) -> Any:
        return function(image, *args, **kwargs)

    return call, (_image(channels=channels),), {}


def _kornia_module(dotted: str, *args: Any, channels: int = 3, **kwargs: Any) -> Built:
    import importlib

    module, name = dotted.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)(*args, **kwargs), (_image(channels=channels),), {}


def _augmentation_sequential() -> Built:
    import kornia.augmentation as K

    pipeline = K.AugmentationSequential(K.RandomHorizontalFlip(p=0.5), K.ColorJitter(0.2, 0.2, 0.2, 0.1, p=1.0),
                                        K.RandomAffine(degrees=15.0, p=1.0))
    return pipeline, (_image(),), {}


def _warp_perspective() -> Built:
    from kornia.geometry.transform import get_perspective_transform, warp_perspective

    def warp(image: torch.Tensor, corners: torch.Tensor) -> torch.Tensor:
        target = torch.tensor([[[0.0, 0.0], [31.0, 0.0], [31.0, 31.0], [0.0, 31.0]]]).expand_as(corners)
        return warp_perspective(image, get_perspective_transform(corners, target), (32, 32))

    corners = torch.tensor([[[1.0, 2.0], [30.0, 1.0], [29.0, 30.0], [2.0, 28.0]]]).repeat(2, 1, 1)
    return warp, (_image(), corners), {}


def _focal_loss() -> Built:
    from kornia.losses import FocalLoss

    logits, labels = torch.randn(4, 5, 8, 8), torch.randint(0, 5, (4, 8, 8))
    return FocalLoss(alpha=0.5, gamma=2.0, reduction="mean"), (logits, labels), {}


KORNIA = [
    Spec("gaussian_blur2d", partial(_kornia_function, "kornia.filters.gaussian_blur2d", (5, 5), (1.5, 1.5))),
    Spec("canny", partial(_kornia_module, "kornia.filters.Canny")),
    Spec("rgb_to_hsv", partial(_kornia_module, "kornia.color.RgbToHsv")),
    Spec("equalize", partial(_kornia_function, "kornia.enhance.equalize")),
    Spec("dilation", partial(_kornia_function, "kornia.morphology.dilation", torch.ones(3, 3))),
    Spec("harris_response", partial(_kornia_function, "kornia.feature.harris_response", channels=1)),
    Spec("sift_descriptor", partial(_kornia_module, "kornia.feature.SIFTDescriptor", 32, 8, 4, channels=1)),
    Spec("augmentation_sequential", _augmentation_sequential),
    Spec("warp_perspective", _warp_perspective),
    Spec("focal_loss", _focal_loss),
]


# x-transformers ----------------------------------------------------------------------------------

def _x_decoder(**layers: Any) -> Built:
    from x_transformers import Decoder, TransformerWrapper

    model = TransformerWrapper(num_tokens=100, max_seq_len=32,
                               attn_layers=Decoder(dim=32, depth=2, heads=4, **layers))
    return model, (_tokens(),), {}


def _x_encoder() -> Built:
    from x_transformers import Encoder, TransformerWrapper

    model = TransformerWrapper(num_tokens=100, max_seq_len=32, attn_layers=Encoder(dim=32, depth=2, heads=4))
    ids = _tokens()
    return model, (ids,), {"mask": torch.ones_like(ids, dtype=torch.bool)}


def _x_vit() -> Built:
    from x_transformers import Encoder, ViTransformerWrapper

    model = ViTransformerWrapper(image_size=32, patch_size=8, num_classes=10,
                                 attn_layers=Encoder(dim=32, depth=2, heads=4))
    return model, (_image(),), {}


def _x_enc_dec() -> Built:
    from x_transformers import XTransformer

    model = XTransformer(dim=32, enc_num_tokens=100, enc_depth=1, enc_heads=4, enc_max_seq_len=32,
                         dec_num_tokens=100, dec_depth=1, dec_heads=4, dec_max_seq_len=32)
    source = _tokens()
    return model, (source, _tokens()), {"mask": torch.ones_like(source, dtype=torch.bool)}


def _x_continuous() -> Built:
    from x_transformers import ContinuousTransformerWrapper, Decoder

    model = ContinuousTransformerWrapper(dim_in=8, dim_out=8, max_seq_len=32,
                                         attn_layers=Decoder(dim=32, depth=2, heads=4))
    return model, (torch.randn(2, 8, 8),), {}


def _x_autoregressive() -> Built:
    from x_transformers import AutoregressiveWrapper, Decoder, TransformerWrapper

    model = AutoregressiveWrapper(TransformerWrapper(num_tokens=100, max_seq_len=32,
                                                     attn_layers=Decoder(dim=32, depth=2, heads=4)))
    return model, (_tokens(length=9),), {}


X_TRANSFORMERS = [
    Spec("decoder", _x_decoder),
    Spec("decoder_rotary_ff_glu", partial(_x_decoder, rotary_pos_emb=True, ff_glu=True, attn_qk_norm=True)),
    Spec("decoder_alibi", partial(_x_decoder, alibi_pos_bias=True)),
    Spec("decoder_residual_attn", partial(_x_decoder, residual_attn=True, macaron=True)),
    Spec("encoder_masked", _x_encoder),
    Spec("vit", _x_vit),
    Spec("xtransformer_enc_dec", _x_enc_dec),
    Spec("continuous", _x_continuous),
    Spec("autoregressive_loss", _x_autoregressive, train=True),
]


# vector-quantize-pytorch -------------------------------------------------------------------------

def _quantizer(name: str, shape: tuple[int, ...] = (2, 16, 32), **kwargs: Any) -> Built:
    import vector_quantize_pytorch

    return getattr(vector_quantize_pytorch, name)(**kwargs), (torch.randn(*shape),), {}


VECTOR_QUANTIZE = [
    Spec("vector_quantize", partial(_quantizer, "VectorQuantize", dim=32, codebook_size=64), train=True),
    Spec("vector_quantize_cosine", partial(_quantizer, "VectorQuantize", dim=32, codebook_size=64,
                                           use_cosine_sim=True, kmeans_init=True), train=True),
    Spec("residual_vq", partial(_quantizer, "ResidualVQ", dim=32, num_quantizers=3, codebook_size=64), train=True),
    Spec("grouped_residual_vq", partial(_quantizer, "GroupedResidualVQ", dim=32, groups=2, num_quantizers=2,
                                        codebook_size=64), train=True),
    Spec("fsq", partial(_quantizer, "FSQ", levels=[8, 5, 5, 5], shape=(2, 16, 4))),
    Spec("residual_fsq", partial(_quantizer, "ResidualFSQ", dim=32, levels=[8, 5, 5], num_quantizers=2)),
    Spec("lfq", partial(_quantizer, "LFQ", dim=16, codebook_size=2 ** 4, shape=(2, 16, 16)), train=True),
    Spec("residual_lfq", partial(_quantizer, "ResidualLFQ", dim=32, codebook_size=2 ** 4, num_quantizers=2),
         train=True),
    Spec("latent_quantize", partial(_quantizer, "LatentQuantize", levels=[5, 5, 8], dim=32, shape=(2, 32, 4, 4))),
    Spec("sim_vq", partial(_quantizer, "SimVQ", dim=32, codebook_size=64), train=True),
    Spec("random_projection", partial(_quantizer, "RandomProjectionQuantizer", dim=32, codebook_size=64,
                                      codebook_dim=16)),
]


# torch-geometric ---------------------------------------------------------------------------------

def _graph(nodes: int = 20, edges: int = 60, features: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(nodes, features), torch.randint(0, nodes, (2, edges))


def _conv(name: str, **kwargs: Any) -> Built:
    import torch_geometric.nn as pyg

    return getattr(pyg, name)(16, 32, **kwargs), _graph(), {}


def _gin() -> Built:
    from torch_geometric.nn import GINConv

    mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32))
    return GINConv(mlp), _graph(), {}


def _gcn_model() -> Built:
    from torch_geometric.nn.models import GCN

    return GCN(in_channels=16, hidden_channels=32, num_layers=2, out_channels=4), _graph(), {}


def _graph_classifier() -> Built:
    from torch_geometric.nn import GCNConv, global_mean_pool

    class GraphClassifier(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = GCNConv(16, 32)
            self.head = torch.nn.Linear(32, 3)

        def forward(self, x: torch.Tensor, edge_index: torch.Tensor, batch: torch.Tensor) -> torch.Tensor:
            return self.head(global_mean_pool(self.conv(x, edge_index).relu(), batch, size=4))

    x, edge_index = _graph()
    return GraphClassifier(), (x, edge_index, torch.arange(20) // 5), {}


def _topk_pooling() -> Built:
    from torch_geometric.nn import TopKPooling

    return TopKPooling(16, ratio=0.5), _graph(), {}


def _to_dense() -> Built:
    from torch_geometric.utils import to_dense_adj, to_dense_batch

    def dense(x: torch.Tensor, edge_index: torch.Tensor) -> tuple[torch.Tensor, ...]:
        batch = torch.arange(20) // 5
        return to_dense_batch(x, batch, batch_size=4, max_num_nodes=5)[0], to_dense_adj(edge_index, max_num_nodes=20)

    return dense, _graph(), {}


TORCH_GEOMETRIC = [
    Spec("gcn_conv", partial(_conv, "GCNConv")),
    Spec("gat_conv", partial(_conv, "GATConv", heads=2)),
    Spec("gatv2_conv", partial(_conv, "GATv2Conv")),
    Spec("sage_conv", partial(_conv, "SAGEConv")),
    Spec("transformer_conv", partial(_conv, "TransformerConv", heads=2)),
    Spec("gin_conv", _gin),
    Spec("gcn_model", _gcn_model),
    Spec("graph_classifier", _graph_classifier),
    Spec("topk_pooling", _topk_pooling),
    Spec("to_dense", _to_dense),
]


# monai -------------------------------------------------------------------------------------------

def _monai_network(name: str, shape: tuple[int, ...], **kwargs: Any) -> Built:
    import monai.networks.nets as nets

    return getattr(nets, name)(**kwargs), (torch.randn(*shape),), {}


def _gaussian_filter() -> Built:
    from monai.networks.layers import GaussianFilter

    return GaussianFilter(spatial_dims=2, sigma=1.5), (torch.randn(2, 3, 16, 16),), {}


def _dice_loss() -> Built:
    from monai.losses import DiceCELoss

    logits, labels = torch.randn(2, 3, 16, 16), torch.randint(0, 3, (2, 1, 16, 16))
    return DiceCELoss(to_onehot_y=True, softmax=True), (logits, labels), {}


MONAI = [
    Spec("unet", partial(_monai_network, "UNet", (2, 1, 32, 32), spatial_dims=2, in_channels=1, out_channels=2,
                         channels=(4, 8, 16), strides=(2, 2), num_res_units=1)),
    Spec("basic_unet", partial(_monai_network, "BasicUNet", (1, 1, 32, 32), spatial_dims=2, in_channels=1,
                               out_channels=2, features=(4, 4, 8, 8, 16, 4))),
    Spec("swin_unetr", partial(_monai_network, "SwinUNETR", (1, 1, 64, 64), in_channels=1, out_channels=2,
                               feature_size=12, spatial_dims=2, depths=(1, 1, 1, 1), num_heads=(1, 1, 1, 1))),
    Spec("segresnet_ds", partial(_monai_network, "SegResNetDS", (1, 1, 32, 32), spatial_dims=2, init_filters=4,
                                 in_channels=1, out_channels=2, blocks_down=(1, 1, 1))),
    Spec("dynunet", partial(_monai_network, "DynUNet", (1, 1, 32, 32), spatial_dims=2, in_channels=1, out_channels=2,
                            kernel_size=(3, 3, 3), strides=(1, 2, 2), upsample_kernel_size=(2, 2),
                            filters=(4, 8, 16))),
    Spec("attention_unet", partial(_monai_network, "AttentionUnet", (1, 1, 32, 32), spatial_dims=2, in_channels=1,
                                   out_channels=2, channels=(4, 8, 16), strides=(2, 2))),
    Spec("unetr", partial(_monai_network, "UNETR", (1, 1, 32, 32), in_channels=1, out_channels=2, img_size=(32, 32),
                          feature_size=4, hidden_size=32, mlp_dim=64, num_heads=4, spatial_dims=2)),
    Spec("vit", partial(_monai_network, "ViT", (2, 1, 32, 32), in_channels=1, img_size=(32, 32), patch_size=(8, 8),
                        hidden_size=32, mlp_dim=64, num_layers=2, num_heads=4, spatial_dims=2, classification=True)),
    Spec("densenet", partial(_monai_network, "DenseNet121", (1, 1, 32, 32), spatial_dims=2, in_channels=1,
                             out_channels=2)),
    Spec("gaussian_filter", _gaussian_filter),
    Spec("dice_ce_loss", _dice_loss),
]


# torchdiffeq --------------------------------------------------------------------------------------

class _ODEFunc(torch.nn.Module):
    """dy/dt = f(t, y): a small MLP, as in torchdiffeq's examples."""

    def __init__(self, size: int = 4):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(size, 16), torch.nn.Tanh(), torch.nn.Linear(16, size))

    def forward(self, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.net(y)


def _odeint(method: str, adjoint: bool = False, **options: Any) -> Built:
    import torchdiffeq

    solve = torchdiffeq.odeint_adjoint if adjoint else torchdiffeq.odeint
    func = _ODEFunc()

    def integrate(y0: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return solve(func, y0, t, method=method, rtol=1e-3, atol=1e-4, **options)

    return integrate, (torch.randn(2, 4), torch.linspace(0.0, 1.0, 5)), {}


TORCHDIFFEQ = [
    Spec("dopri5", partial(_odeint, "dopri5")),
    Spec("dopri8", partial(_odeint, "dopri8")),
    Spec("bosh3", partial(_odeint, "bosh3")),
    Spec("adaptive_heun", partial(_odeint, "adaptive_heun")),
    Spec("rk4", partial(_odeint, "rk4", options={"step_size": 0.25})),
    Spec("euler", partial(_odeint, "euler", options={"step_size": 0.25})),
    Spec("midpoint", partial(_odeint, "midpoint")),
    Spec("implicit_adams", partial(_odeint, "implicit_adams", options={"step_size": 0.25})),
    Spec("dopri5_adjoint", partial(_odeint, "dopri5", adjoint=True)),
]


# pytorch-metric-learning ---------------------------------------------------------------------------

def _embeddings() -> tuple[torch.Tensor, torch.Tensor]:
    """16 embeddings of size 8 in 4 classes, each class present (miners need positives)."""
    return torch.nn.functional.normalize(torch.randn(16, 8), dim=1), torch.arange(16) % 4


def _metric_loss(name: str, miner: str | None = None, **options: Any) -> Built:
    from pytorch_metric_learning import losses, miners

    loss = getattr(losses, name)(**options)
    if miner is None:
        return loss, _embeddings(), {}
    mine = getattr(miners, miner)()

    def mined_loss(embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return loss(embeddings, labels, mine(embeddings, labels))

    return mined_loss, _embeddings(), {}


def _miner(name: str, **options: Any) -> Built:
    from pytorch_metric_learning import miners

    return getattr(miners, name)(**options), _embeddings(), {}


METRIC_LEARNING = [
    Spec("contrastive", partial(_metric_loss, "ContrastiveLoss")),
    Spec("triplet_margin", partial(_metric_loss, "TripletMarginLoss")),
    Spec("ntxent", partial(_metric_loss, "NTXentLoss")),
    Spec("supcon", partial(_metric_loss, "SupConLoss")),
    Spec("multi_similarity", partial(_metric_loss, "MultiSimilarityLoss")),
    Spec("circle", partial(_metric_loss, "CircleLoss")),
    Spec("lifted_structure", partial(_metric_loss, "LiftedStructureLoss")),
    Spec("arcface", partial(_metric_loss, "ArcFaceLoss", num_classes=4, embedding_size=8)),
    Spec("proxy_anchor", partial(_metric_loss, "ProxyAnchorLoss", num_classes=4, embedding_size=8)),
    Spec("normalized_softmax", partial(_metric_loss, "NormalizedSoftmaxLoss", num_classes=4, embedding_size=8)),
    Spec("fast_ap", partial(_metric_loss, "FastAPLoss")),
    Spec("triplet_with_miner", partial(_metric_loss, "TripletMarginLoss", "TripletMarginMiner")),
    Spec("contrastive_with_miner", partial(_metric_loss, "ContrastiveLoss", "MultiSimilarityMiner")),
    Spec("batch_hard_miner", partial(_miner, "BatchHardMiner")),
    Spec("pair_margin_miner", partial(_miner, "PairMarginMiner")),
]


# zuko --------------------------------------------------------------------------------------------

def _flow(name: str, sample: bool = False, **options: Any) -> Built:
    """A conditional normalizing flow: the log-density of samples given a context, as training
    computes it, or samples drawn given the context."""
    import zuko

    flow = getattr(zuko.flows, name)(features=3, context=2, **options)

    def log_prob(x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return flow(c).log_prob(x)

    def rsample(x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return flow(c).rsample()

    return (rsample if sample else log_prob), (torch.randn(8, 3), torch.randn(8, 2)), {}


ZUKO = [
    Spec("maf", partial(_flow, "MAF")),
    Spec("maf_sample", partial(_flow, "MAF", sample=True)),
    Spec("nsf", partial(_flow, "NSF")),
    Spec("ncsf", partial(_flow, "NCSF")),
    Spec("realnvp", partial(_flow, "RealNVP")),
    Spec("nice", partial(_flow, "NICE")),
    Spec("gf", partial(_flow, "GF")),
    Spec("naf", partial(_flow, "NAF")),
    Spec("unaf", partial(_flow, "UNAF")),
    Spec("sospf", partial(_flow, "SOSPF")),
    Spec("bpf", partial(_flow, "BPF")),
    Spec("cnf", partial(_flow, "CNF")),
]


# torchsde ----------------------------------------------------------------------------------------

class _SDE(torch.nn.Module):
    """dy = f(t, y) dt + g(t, y) dW: small MLP drift and diffusion, as in torchsde's examples."""

    def __init__(self, noise_type: str, sde_type: str, size: int = 3):
        super().__init__()
        self.noise_type, self.sde_type = noise_type, sde_type
        self.drift = torch.nn.Sequential(torch.nn.Linear(size, 8), torch.nn.Tanh(), torch.nn.Linear(8, size))
        self.diffusion = torch.nn.Linear(size, size)

    def f(self, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.drift(y)

    def g(self, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.diffusion(y))


def _sdeint(method: str, noise_type: str = "diagonal", sde_type: str = "ito", adjoint: bool = False) -> Built:
    import torchsde

    sde = _SDE(noise_type, sde_type)
    solve = torchsde.sdeint_adjoint if adjoint else torchsde.sdeint

    def integrate(y0: torch.Tensor, ts: torch.Tensor) -> torch.Tensor:
        return solve(sde, y0, ts, method=method, dt=0.1)

    return integrate, (torch.randn(2, 3), torch.linspace(0.0, 0.5, 3)), {}


TORCHSDE = [
    Spec("euler", partial(_sdeint, "euler")),
    Spec("milstein", partial(_sdeint, "milstein")),
    Spec("srk", partial(_sdeint, "srk")),
    Spec("euler_heun", partial(_sdeint, "euler_heun", sde_type="stratonovich")),
    Spec("reversible_heun", partial(_sdeint, "reversible_heun", sde_type="stratonovich")),
    Spec("euler_adjoint", partial(_sdeint, "euler", adjoint=True)),
]


# nflows ------------------------------------------------------------------------------------------

def _nflow(kind: str, sample: bool = False) -> Built:
    from nflows import distributions, flows, transforms

    features, context = 3, 2
    if kind == "maf":
        flow = flows.MaskedAutoregressiveFlow(features=features, hidden_features=8, num_layers=2,
                                              num_blocks_per_layer=1)
    elif kind == "realnvp":
        flow = flows.SimpleRealNVP(features=features, hidden_features=8, num_layers=2, num_blocks_per_layer=1)
    else:
        layers = []
        for _ in range(2):
            layers.append(transforms.ReversePermutation(features=features))
            if kind == "rq_spline":
                layers.append(transforms.MaskedPiecewiseRationalQuadraticAutoregressiveTransform(
                    features=features, hidden_features=8, context_features=context, num_bins=4, tails="linear",
                    tail_bound=3.0))
            else:
                layers.append(transforms.MaskedAffineAutoregressiveTransform(
                    features=features, hidden_features=8, context_features=context))
        flow = flows.Flow(transforms.CompositeTransform(layers), distributions.StandardNormal(shape=[features]))
    conditional = kind not in ("maf", "realnvp")

    def log_prob(x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return flow.log_prob(x, context=c if conditional else None)

    def draw(x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return flow.sample(1, context=c if conditional else None) if conditional else flow.sample(8)

    return (draw if sample else log_prob), (torch.randn(8, features), torch.randn(8, context)), {}


NFLOWS = [
    Spec("maf", partial(_nflow, "maf")),
    Spec("maf_sample", partial(_nflow, "maf", sample=True)),
    Spec("realnvp", partial(_nflow, "realnvp")),
    Spec("affine_conditional", partial(_nflow, "affine")),
    Spec("rq_spline", partial(_nflow, "rq_spline")),
    Spec("rq_spline_sample", partial(_nflow, "rq_spline", sample=True)),
]


# torchmetrics ------------------------------------------------------------------------------------

def _metric_inputs(kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    if kind == "classes":
        return torch.randn(16, 4).softmax(-1), torch.arange(16) % 4
    if kind == "binary":
        return torch.rand(16), torch.arange(16) % 2
    if kind == "image":
        return torch.rand(1, 1, 16, 16), torch.rand(1, 1, 16, 16)
    return torch.randn(16), torch.randn(16)


def _metric(name: str, kind: str, **options: Any) -> Built:
    import torchmetrics.functional as functional

    metric = getattr(functional, name)

    def measure(preds: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return metric(preds, target, **options)

    return measure, _metric_inputs(kind), {}


def _metric_module(name: str, kind: str = "classes", **options: Any) -> Built:
    """A metric as a module (`R2Score()(preds, target)`): its forward updates the state and computes."""
    import torchmetrics

    return getattr(torchmetrics.classification if kind == "classes" else torchmetrics, name)(**options), _metric_inputs(kind), {}


TORCHMETRICS = [
    Spec("accuracy", partial(_metric, "accuracy", "classes", task="multiclass", num_classes=4)),
    Spec("f1_score", partial(_metric, "f1_score", "classes", task="multiclass", num_classes=4)),
    Spec("auroc", partial(_metric, "auroc", "binary", task="binary")),
    Spec("mean_squared_error", partial(_metric, "mean_squared_error", "values")),
    Spec("pearson_corrcoef", partial(_metric, "pearson_corrcoef", "values")),
    Spec("r2_score", partial(_metric, "r2_score", "values")),
    Spec("spearman_corrcoef", partial(_metric, "spearman_corrcoef", "values")),
    Spec("ssim", partial(_metric, "structural_similarity_index_measure", "image", data_range=1.0)),
    Spec("psnr", partial(_metric, "peak_signal_noise_ratio", "image", data_range=1.0)),
    Spec("multiclass_accuracy_module", partial(_metric_module, "MulticlassAccuracy", num_classes=4)),
    Spec("r2_score_module", partial(_metric_module, "R2Score", "values")),
    Spec("mean_squared_error_module", partial(_metric_module, "MeanSquaredError", "values")),
    Spec("pearson_corrcoef_module", partial(_metric_module, "PearsonCorrCoef", "values")),
    Spec("binary_auroc_module", partial(_metric_module, "AUROC", "binary", task="binary")),
]


# gpytorch ----------------------------------------------------------------------------------------

def _gp_kernel(kind: str) -> Built:
    import gpytorch

    base = {"rbf": gpytorch.kernels.RBFKernel, "matern": partial(gpytorch.kernels.MaternKernel, nu=2.5),
            "periodic": gpytorch.kernels.PeriodicKernel}[kind]()
    kernel = gpytorch.kernels.ScaleKernel(base)

    def covariance(x: torch.Tensor) -> torch.Tensor:
        return kernel(x).to_dense()

    return covariance, (torch.randn(16, 3),), {}


def _exact_gp(predict: bool = False) -> Built:
    import gpytorch

    class ExactGP(gpytorch.models.ExactGP):
        def __init__(self, x: torch.Tensor, y: torch.Tensor, likelihood: Any):
            super().__init__(x, y, likelihood)
            self.mean_module = gpytorch.means.ConstantMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

        def forward(self, x: torch.Tensor) -> Any:
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

    x, y = torch.randn(16, 2), torch.randn(16)
    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    model = ExactGP(x, y, likelihood)
    if predict:
        model.eval()
        likelihood.eval()
        return (lambda test: likelihood(model(test)).mean), (torch.randn(4, 2),), {}
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    model.train()
    return (lambda inputs, targets: -mll(model(inputs), targets)), (x, y), {}


def _mvn_log_prob() -> Built:
    import gpytorch

    def log_prob(mean: torch.Tensor, factor: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        covariance = factor @ factor.mT + torch.eye(factor.shape[-1])
        return gpytorch.distributions.MultivariateNormal(mean, covariance).log_prob(value)

    return log_prob, (torch.randn(6), torch.randn(6, 6), torch.randn(6)), {}


GPYTORCH = [
    Spec("rbf_kernel", partial(_gp_kernel, "rbf")),
    Spec("matern_kernel", partial(_gp_kernel, "matern")),
    Spec("periodic_kernel", partial(_gp_kernel, "periodic")),
    Spec("exact_gp_loss", _exact_gp, train=True),
    Spec("exact_gp_predict", partial(_exact_gp, predict=True)),
    Spec("mvn_log_prob", _mvn_log_prob),
]


# e3nn --------------------------------------------------------------------------------------------

def _e3nn(kind: str) -> Built:
    from e3nn import nn, o3

    if kind == "linear":
        module = o3.Linear("4x0e + 2x1o", "2x0e + 1x1o")
        return module, (torch.randn(5, module.irreps_in.dim),), {}
    if kind == "tensor_product":
        module = o3.FullyConnectedTensorProduct("2x0e + 1x1o", "1x0e + 1x1o", "2x0e + 1x1o")
        return module, (torch.randn(5, 5), torch.randn(5, 4)), {}
    if kind == "spherical_harmonics":
        return partial(o3.spherical_harmonics, [0, 1, 2], normalize=True), (torch.randn(8, 3),), {}
    if kind == "gate":
        module = nn.Gate("2x0e", [torch.relu], "1x0e", [torch.sigmoid], "1x1o")
        return module, (torch.randn(5, module.irreps_in.dim),), {}
    if kind == "norm":
        module = o3.Norm("2x0e + 2x1o")
        return module, (torch.randn(5, 8),), {}
    module = nn.FullyConnectedNet([4, 8, 2], torch.relu)
    return module, (torch.randn(5, 4),), {}


E3NN = [Spec(kind, partial(_e3nn, kind))
        for kind in ("linear", "tensor_product", "spherical_harmonics", "gate", "norm", "fully_connected")]


# fair-esm ----------------------------------------------------------------------------------------

def _esm2(**options: Any) -> Built:
    import esm

    model = esm.model.esm2.ESM2(num_layers=2, embed_dim=32, attention_heads=4, alphabet="ESM-1b")
    tokens = torch.randint(4, 24, (2, 10))
    tokens[:, 0] = 0  # the start token
    return model, (tokens,), options


FAIR_ESM = [
    Spec("esm2", _esm2),
    Spec("esm2_representations", partial(_esm2, repr_layers=[2])),
    Spec("esm2_contacts", partial(_esm2, return_contacts=True)),
    Spec("esm2_head_weights", partial(_esm2, need_head_weights=True)),
]


# pyro-ppl ----------------------------------------------------------------------------------------

def _pyro_flow(kind: str) -> Built:
    import pyro.distributions as dist
    from pyro.distributions import transforms

    transform = {"affine_autoregressive": partial(transforms.affine_autoregressive, 3, hidden_dims=[8]),
                 "spline_coupling": partial(transforms.spline_coupling, 3, hidden_dims=[8], count_bins=4),
                 "spline_autoregressive": partial(transforms.spline_autoregressive, 3, hidden_dims=[8], count_bins=4),
                 }[kind]()
    flow = dist.TransformedDistribution(dist.Normal(torch.zeros(3), torch.ones(3)), [transform])
    return flow.log_prob, (torch.randn(8, 3),), {}


def _pyro_elbo(kind: str) -> Built:
    import pyro
    import pyro.distributions as dist
    from pyro import infer

    pyro.clear_param_store()

    def model(x: torch.Tensor) -> None:
        loc = pyro.sample("loc", dist.Normal(0.0, 1.0))
        with pyro.plate("data", x.shape[0]):
            pyro.sample("obs", dist.Normal(loc, 1.0), obs=x)

    def guide(x: torch.Tensor) -> None:
        mean = pyro.param("mean", torch.tensor(0.0))
        pyro.sample("loc", dist.Normal(mean, 1.0))

    elbo = {"trace": infer.Trace_ELBO, "trace_mean_field": infer.TraceMeanField_ELBO}[kind]()
    return partial(elbo.differentiable_loss, model, guide), (torch.randn(5),), {}


def _pyro_bayesian_linear() -> Built:
    import pyro.distributions as dist
    from pyro.nn import PyroModule, PyroSample

    class BayesianLinear(PyroModule):
        def __init__(self) -> None:
            super().__init__()
            self.linear = PyroModule[torch.nn.Linear](3, 1)
            self.linear.weight = PyroSample(dist.Normal(0.0, 1.0).expand([1, 3]).to_event(2))
            self.linear.bias = PyroSample(dist.Normal(0.0, 1.0).expand([1]).to_event(1))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.linear(x).squeeze(-1)

    return BayesianLinear(), (torch.randn(4, 3),), {}


PYRO = [
    Spec("affine_autoregressive", partial(_pyro_flow, "affine_autoregressive")),
    Spec("spline_coupling", partial(_pyro_flow, "spline_coupling")),
    Spec("spline_autoregressive", partial(_pyro_flow, "spline_autoregressive")),
    Spec("trace_elbo", partial(_pyro_elbo, "trace"), train=True),
    Spec("trace_mean_field_elbo", partial(_pyro_elbo, "trace_mean_field"), train=True),
    Spec("bayesian_linear", _pyro_bayesian_linear),
]


# peft --------------------------------------------------------------------------------------------

def _peft(kind: str, **options: Any) -> Built:
    import peft
    from transformers import GPT2Config, GPT2LMHeadModel

    model = GPT2LMHeadModel(GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=32,
                                       bos_token_id=0, eos_token_id=0))
    config = {"lora": partial(peft.LoraConfig, r=4, target_modules=["c_attn"], fan_in_fan_out=True, **options),
              "ia3": partial(peft.IA3Config, target_modules=["c_attn", "mlp.c_proj"], feedforward_modules=["mlp.c_proj"],
                             fan_in_fan_out=True),
              "prefix": partial(peft.PrefixTuningConfig, task_type="CAUSAL_LM", num_virtual_tokens=4),
              }[kind]()
    return peft.get_peft_model(model, config), (_tokens(),), {}


PEFT = [
    Spec("lora", partial(_peft, "lora")),
    Spec("lora_dora", partial(_peft, "lora", use_dora=True)),
    Spec("lora_dropout", partial(_peft, "lora", lora_dropout=0.1), train=True),
    Spec("ia3", partial(_peft, "ia3")),
    Spec("prefix_tuning", partial(_peft, "prefix")),
]


# reformer-pytorch --------------------------------------------------------------------------------

def _reformer(**options: Any) -> Built:
    from reformer_pytorch import ReformerLM

    model = ReformerLM(num_tokens=100, dim=32, depth=2, max_seq_len=64, heads=4, bucket_size=8, **options)
    return model, (torch.randint(0, 100, (2, 64)),), {}


REFORMER = [
    Spec("reformer_lm", _reformer),
    Spec("reformer_full_attention", partial(_reformer, use_full_attn=True)),
    Spec("reformer_causal", partial(_reformer, causal=True)),
    Spec("reformer_train", partial(_reformer, lsh_dropout=0.1, ff_chunks=2), train=True),
]


# snntorch ----------------------------------------------------------------------------------------

def _spiking_net(neuron: str, steps: int = 4, **options: Any) -> Built:
    """A two-layer spiking network stepped through time, as in snntorch's tutorials: each neuron keeps
    its membrane state across the steps (init_hidden) and the output spikes are summed."""
    import snntorch as snn
    from snntorch import surrogate, utils

    def spiking(features: int) -> torch.nn.Module:
        if neuron == "synaptic":
            return snn.Synaptic(alpha=0.8, beta=0.9, init_hidden=True, **options)
        if neuron == "rleaky":
            return snn.RLeaky(beta=0.9, linear_features=features, init_hidden=True, **options)
        return getattr(snn, neuron)(beta=0.9, spike_grad=surrogate.fast_sigmoid(), init_hidden=True, **options)

    class SpikingNet(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), spiking(16), torch.nn.Linear(16, 4), spiking(4))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            utils.reset(self.net)
            total = torch.zeros(x.shape[1], 4)
            for step in range(steps):
                out = self.net(x[step])
                total = total + (out[0] if isinstance(out, tuple) else out)
            return total

    return SpikingNet(), (torch.rand(steps, 2, 8),), {}


def _spiking_loss(name: str) -> Built:
    import snntorch.functional as SF

    loss = getattr(SF, name)()
    return loss, (torch.rand(4, 2, 3), torch.tensor([0, 2])), {}


def _spike_rate() -> Built:
    from snntorch import spikegen

    return partial(spikegen.rate, num_steps=4), (torch.rand(2, 8),), {}


SNNTORCH = [
    Spec("leaky", partial(_spiking_net, "Leaky")),
    Spec("leaky_zero_reset", partial(_spiking_net, "Leaky", reset_mechanism="zero")),
    Spec("synaptic", partial(_spiking_net, "synaptic")),
    Spec("rleaky", partial(_spiking_net, "rleaky")),
    Spec("leaky_train", partial(_spiking_net, "Leaky", learn_beta=True), train=True),
    Spec("ce_rate_loss", partial(_spiking_loss, "ce_rate_loss"), train=True),
    Spec("mse_count_loss", partial(_spiking_loss, "mse_count_loss"), train=True),
    Spec("rate_coding", _spike_rate),
]


# pytorch-tabnet ----------------------------------------------------------------------------------

def _tabnet(**options: Any) -> Built:
    from pytorch_tabnet.tab_network import TabNet

    model = TabNet(input_dim=6, output_dim=3, n_d=8, n_a=8, n_steps=3, virtual_batch_size=4,
                   group_attention_matrix=torch.eye(6), **options)
    features = torch.rand(8, 6)
    if options.get("cat_idxs"):
        features[:, 0] = torch.randint(0, 5, (8,)).float()
    return model, (features,), {}


def _tabnet_pretraining() -> Built:
    from pytorch_tabnet.tab_network import TabNetPretraining

    model = TabNetPretraining(input_dim=6, pretraining_ratio=0.2, n_d=8, n_a=8, n_steps=2, virtual_batch_size=4,
                              group_attention_matrix=torch.eye(6))
    return model, (torch.rand(8, 6),), {}


TABNET = [
    Spec("tabnet", _tabnet),
    Spec("tabnet_entmax", partial(_tabnet, mask_type="entmax")),
    Spec("tabnet_embeddings", partial(_tabnet, cat_idxs=[0], cat_dims=[5], cat_emb_dim=[2])),
    Spec("tabnet_train", _tabnet, train=True),
    Spec("tabnet_pretraining", _tabnet_pretraining, train=True),
]


# entmax ------------------------------------------------------------------------------------------

def _entmax(name: str, loss: bool = False, **options: Any) -> Built:
    import entmax

    module = getattr(entmax, name)(**options)
    if loss:
        return module, (torch.randn(4, 6), torch.tensor([0, 1, 5, 2])), {}
    return module, (torch.randn(4, 6),), {}


ENTMAX = [
    Spec("sparsemax", partial(_entmax, "Sparsemax", dim=-1)),
    Spec("entmax15", partial(_entmax, "Entmax15", dim=-1)),
    Spec("entmax15_topk", partial(_entmax, "Entmax15", dim=-1, k=3)),
    Spec("entmax_bisect", partial(_entmax, "EntmaxBisect", alpha=1.3)),
    Spec("sparsemax_loss", partial(_entmax, "SparsemaxLoss", loss=True), train=True),
    Spec("entmax15_loss", partial(_entmax, "Entmax15Loss", loss=True), train=True),
    Spec("entmax_bisect_loss", partial(_entmax, "EntmaxBisectLoss", loss=True), train=True),
]


# mambapy -----------------------------------------------------------------------------------------

def _mamba(kind: str, **options: Any) -> Built:
    # (Mamba-2 and the `lm` wrapper import the CUDA-only mamba_ssm package: not run.)
    if kind == "jamba":
        from mambapy.jamba import JambaLM, JambaLMConfig

        config = JambaLMConfig(d_model=16, n_layers=2, mlp_size=32, vocab_size=100, num_attention_heads=2,
                               num_key_value_heads=2, num_experts=2, num_experts_per_tok=1, attn_layer_offset=1,
                               attn_layer_period=2, expert_layer_offset=1, expert_layer_period=2, **options)
        return JambaLM(config), (_tokens(),), {}
    from mambapy.mamba import Mamba, MambaConfig

    return Mamba(MambaConfig(d_model=16, n_layers=2, **options)), (torch.randn(2, 8, 16),), {}


MAMBAPY = [
    Spec("mamba", partial(_mamba, "mamba")),
    Spec("mamba_sequential", partial(_mamba, "mamba", pscan=False)),
    Spec("mamba_train", partial(_mamba, "mamba", inner_layernorms=True), train=True),
    Spec("jamba", partial(_mamba, "jamba")),
]


# torchcde ----------------------------------------------------------------------------------------

class _CDEField(torch.nn.Module):
    """f(t, z): the vector field of a neural CDE, a matrix per hidden state, as in torchcde's example."""

    def __init__(self, channels: int = 3, hidden: int = 4) -> None:
        super().__init__()
        self.channels, self.hidden = channels, hidden
        self.linear = torch.nn.Linear(hidden, hidden * channels)

    def forward(self, t: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return self.linear(z).tanh().view(z.size(0), self.hidden, self.channels)


def _cde(interpolation: str, **options: Any) -> Built:
    import torchcde

    field = _CDEField()
    x = torch.cumsum(torch.randn(2, 6, 3), dim=1)

    def solve(x: torch.Tensor) -> torch.Tensor:
        if interpolation == "linear":
            path = torchcde.LinearInterpolation(torchcde.linear_interpolation_coeffs(x))
        elif interpolation == "hermite":
            path = torchcde.CubicSpline(torchcde.hermite_cubic_coefficients_with_backward_differences(x))
        else:
            path = torchcde.CubicSpline(torchcde.natural_cubic_coeffs(x))
        z0 = torch.zeros(x.size(0), 4)
        return torchcde.cdeint(X=path, func=field, z0=z0, t=path.interval, **options)

    return solve, (x,), {}


TORCHCDE = [
    Spec("cde_cubic", partial(_cde, "cubic", method="rk4", options={"step_size": 0.5})),
    Spec("cde_linear", partial(_cde, "linear", method="rk4", options={"step_size": 0.5})),
    Spec("cde_hermite", partial(_cde, "hermite", method="rk4", options={"step_size": 0.5})),
    Spec("cde_dopri5", partial(_cde, "cubic")),
    Spec("cde_adjoint", partial(_cde, "cubic", adjoint=True, method="rk4", options={"step_size": 0.5}), train=True),
]


# normflows ---------------------------------------------------------------------------------------

def _normflow(kind: str, method: str = "log_prob") -> Built:
    import normflows as nf

    def mlp() -> torch.nn.Module:
        return nf.nets.MLP([2, 8, 2], init_zeros=True)

    flows: list[torch.nn.Module] = []
    for _ in range(2):
        if kind == "real_nvp":
            flows += [nf.flows.AffineCouplingBlock(nf.nets.MLP([1, 8, 2], init_zeros=True)), nf.flows.Permute(2)]
        elif kind == "masked_affine":
            mask = torch.tensor([1.0, 0.0])
            flows += [nf.flows.MaskedAffineFlow(mask, mlp(), mlp()), nf.flows.ActNorm(2)]
        elif kind == "spline":
            flows += [nf.flows.AutoregressiveRationalQuadraticSpline(2, 1, 8), nf.flows.LULinearPermute(2)]
        elif kind == "coupled_spline":
            flows += [nf.flows.CoupledRationalQuadraticSpline(2, 1, 8), nf.flows.Permute(2, mode="swap")]
        elif kind == "planar":
            flows += [nf.flows.Planar((2,)), nf.flows.Radial((2,))]
    model = nf.NormalizingFlow(nf.distributions.DiagGaussian(2), flows)
    if method == "sample":
        return partial(model.sample, 4), (), {}
    return getattr(model, method), (torch.randn(4, 2),), {}


NORMFLOWS = [
    Spec("real_nvp", partial(_normflow, "real_nvp")),
    Spec("masked_affine", partial(_normflow, "masked_affine")),
    Spec("spline", partial(_normflow, "spline")),
    Spec("coupled_spline", partial(_normflow, "coupled_spline")),
    Spec("planar_radial_sample", partial(_normflow, "planar", "sample")),
    Spec("real_nvp_forward_kld", partial(_normflow, "real_nvp", "forward_kld"), train=True),
    Spec("masked_affine_sample", partial(_normflow, "masked_affine", "sample")),
]


# torchode ----------------------------------------------------------------------------------------

class _Decay(torch.nn.Module):
    """dy/dt = f(t, y): a small MLP, as in torchode's examples."""

    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))

    def forward(self, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.net(y)


def _torchode(method: str, controller: str = "integral", adjoint: str = "AutoDiffAdjoint") -> Built:
    import torchode

    term = torchode.ODETerm(_Decay())
    step_method = getattr(torchode, method)(term=term)
    if controller == "fixed":
        step_size_controller = torchode.FixedStepController()
    else:
        step_size_controller = {"integral": torchode.IntegralController, "pid": partial(
            torchode.PIDController, pcoeff=0.3, icoeff=0.3, dcoeff=0.0)}[controller](atol=1e-6, rtol=1e-3, term=term)
    solver = getattr(torchode, adjoint)(step_method, step_size_controller)
    t_eval = torch.linspace(0.0, 1.0, 5).repeat(2, 1)

    def solve(y0: torch.Tensor) -> torch.Tensor:
        problem = torchode.InitialValueProblem(y0=y0, t_eval=t_eval)
        dt0 = torch.full((2,), 0.1) if controller == "fixed" else None
        return solver.solve(problem, dt0=dt0).ys

    return solve, (torch.randn(2, 3),), {}


TORCHODE = [
    Spec("dopri5", partial(_torchode, "Dopri5")),
    Spec("tsit5", partial(_torchode, "Tsit5")),
    Spec("heun_pid", partial(_torchode, "Heun", "pid")),
    Spec("euler_fixed", partial(_torchode, "Euler", "fixed")),
    Spec("dopri5_backprop", partial(_torchode, "Dopri5"), train=True),
]


# geoopt ------------------------------------------------------------------------------------------

def _manifold_op(manifold: str, operation: str) -> Built:
    import geoopt

    ball = {"poincare": lambda: geoopt.PoincareBall(c=1.0), "sphere": geoopt.Sphere,
            "stiefel": geoopt.EuclideanStiefel, "lorentz": geoopt.Lorentz,
            "stereographic": lambda: geoopt.Stereographic(k=-0.5)}[manifold]()
    if manifold == "stiefel":
        point = torch.linalg.qr(torch.randn(2, 4, 3))[0]
        vector = torch.randn(2, 4, 3)
    else:
        point = ball.projx(torch.randn(4, 3) * 0.1)
        vector = torch.randn(4, 3) * 0.1
    if operation == "dist":
        return ball.dist, (point, ball.projx(torch.randn(4, 3) * 0.1)), {}
    return getattr(ball, operation), (point, vector), {}


def _hyperbolic_mlr() -> Built:
    import geoopt
    from geoopt.layers.stereographic import Distance2StereographicHyperplanes

    ball = geoopt.PoincareBall(c=1.0)
    layer = Distance2StereographicHyperplanes(3, 5, ball=ball)
    return layer, (ball.projx(torch.randn(4, 3) * 0.1),), {}


GEOOPT = [
    Spec("poincare_expmap", partial(_manifold_op, "poincare", "expmap")),
    Spec("poincare_dist", partial(_manifold_op, "poincare", "dist")),
    Spec("poincare_mobius_add", partial(_manifold_op, "poincare", "mobius_add")),
    Spec("stereographic_logmap", partial(_manifold_op, "stereographic", "logmap")),
    Spec("sphere_retr", partial(_manifold_op, "sphere", "retr")),
    Spec("stiefel_retr", partial(_manifold_op, "stiefel", "retr")),
    Spec("stiefel_proju", partial(_manifold_op, "stiefel", "proju")),
    Spec("lorentz_expmap", partial(_manifold_op, "lorentz", "expmap")),
    Spec("hyperbolic_mlr", _hyperbolic_mlr),
]


# local-attention ---------------------------------------------------------------------------------

def _local_attention(**options: Any) -> Built:
    from local_attention import LocalAttention

    attention = LocalAttention(dim=16, window_size=4, autopad=True, **options)
    q, k, v = (torch.randn(2, 2, 10, 16) for _ in range(3))
    return attention, (q, k, v), {"mask": torch.ones(2, 10, dtype=torch.bool)}


def _local_transformer(**options: Any) -> Built:
    from local_attention import LocalTransformer

    model = LocalTransformer(num_tokens=100, max_seq_len=32, dim=16, depth=2, local_attn_window_size=4, dim_head=8,
                             heads=2, **options)
    return model, (_tokens(length=16),), {}


LOCAL_ATTENTION = [
    Spec("local_attention", _local_attention),
    Spec("local_attention_causal", partial(_local_attention, causal=True, look_forward=0)),
    Spec("local_attention_xpos", partial(_local_attention, causal=True, use_xpos=True, xpos_scale_base=32)),
    Spec("local_transformer", _local_transformer),
    Spec("local_transformer_dynamic_bias", partial(_local_transformer, use_dynamic_pos_bias=True)),
    Spec("local_transformer_train", partial(_local_transformer, attn_dropout=0.1), train=True),
]


# perceiver-pytorch -------------------------------------------------------------------------------

def _perceiver(kind: str, **options: Any) -> Built:
    import perceiver_pytorch

    if kind == "io":
        model = perceiver_pytorch.PerceiverIO(dim=16, queries_dim=16, logits_dim=10, depth=2, num_latents=8,
                                              latent_dim=32, latent_heads=2, cross_dim_head=8, latent_dim_head=8,
                                              **options)
        return model, (torch.randn(2, 12, 16),), {"queries": torch.randn(2, 5, 16)}
    if kind == "lm":
        model = perceiver_pytorch.PerceiverLM(dim=16, num_tokens=100, max_seq_len=32, depth=2, num_latents=8,
                                              latent_dim=32, latent_heads=2, cross_dim_head=8, latent_dim_head=8)
        return model, (_tokens(length=12),), {"mask": torch.ones(2, 12, dtype=torch.bool)}
    model = perceiver_pytorch.Perceiver(input_channels=3, input_axis=2, num_freq_bands=4, max_freq=10.0, depth=2,
                                        num_latents=8, latent_dim=32, cross_dim_head=8, latent_dim_head=8,
                                        latent_heads=2, num_classes=10, **options)
    return model, (torch.randn(2, 8, 8, 3),), {}


PERCEIVER = [
    Spec("perceiver", partial(_perceiver, "classifier")),
    Spec("perceiver_no_fourier", partial(_perceiver, "classifier", fourier_encode_data=False)),
    Spec("perceiver_tied", partial(_perceiver, "classifier", weight_tie_layers=True)),
    Spec("perceiver_io", partial(_perceiver, "io")),
    Spec("perceiver_io_seq_dropout", partial(_perceiver, "io", seq_dropout_prob=0.2), train=True),
    Spec("perceiver_lm", partial(_perceiver, "lm")),
]



# pytorch-optimizer and schedulefree: a compiled `optimizer.step()` ---------------------------------

def _stepped(make_optimizer: Callable[[Any], Any], *, train_mode: bool = False) -> Built:
    """`optimizer.step` after one backward pass of a small MLP, as `torch.compile(opt.step)` in a
    training loop runs it (the gradients are there; the step is what is compiled)."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    optimizer = make_optimizer(model.parameters())
    if train_mode:
        optimizer.train()  # schedule-free optimizers switch their parameters to the training point
    model(torch.randn(3, 4)).pow(2).mean().backward()
    return optimizer.step, (), {}


def _pytorch_optimizer(name: str, **options: Any) -> Built:
    import pytorch_optimizer

    return _stepped(partial(pytorch_optimizer.load_optimizer(name), lr=1e-3, **options))


PYTORCH_OPTIMIZER = [
    Spec(name, partial(_pytorch_optimizer, name), train=True)
    for name in ("adamp", "lamb", "lion", "adabelief", "madgrad", "adan", "prodigy", "adai", "came")
]


def _schedulefree(name: str) -> Built:
    import schedulefree

    return _stepped(partial(getattr(schedulefree, name), lr=1e-3), train_mode=True)


SCHEDULEFREE = [
    Spec(name, partial(_schedulefree, name), train=True)
    for name in ("AdamWScheduleFree", "SGDScheduleFree", "RAdamScheduleFree")
]


# st-moe-pytorch ----------------------------------------------------------------------------------

def _st_moe(block: bool = False, **options: Any) -> Built:
    from st_moe_pytorch import MoE, SparseMoEBlock

    moe = MoE(dim=16, num_experts=4, **{"gating_top_n": 2, **options})
    model = SparseMoEBlock(moe, add_ff_before=True, add_ff_after=True) if block else moe
    return model, (torch.randn(2, 8, 16),), {}


ST_MOE = [
    Spec("moe", _st_moe),
    Spec("moe_top3", partial(_st_moe, gating_top_n=3)),
    Spec("sparse_moe_block", partial(_st_moe, block=True)),
    Spec("moe_train", _st_moe, train=True),
]


# Held-out libraries of this round -----------------------------------------------------------------

# botorch -----------------------------------------------------------------------------------------

def _botorch_gp(fixed_noise: bool = False, input_transform: bool = False) -> Any:
    """A fitted-shape SingleTaskGP in eval mode (random hyperparameters: nothing is fitted)."""
    from botorch.models import SingleTaskGP
    from botorch.models.transforms.input import Normalize

    x = torch.rand(12, 2, dtype=torch.float64)
    y = (x.sin().sum(-1, keepdim=True) + 0.1 * torch.randn(12, 1, dtype=torch.float64))
    noise = torch.full_like(y, 0.01) if fixed_noise else None
    model = SingleTaskGP(x, y, train_Yvar=noise, input_transform=Normalize(d=2) if input_transform else None)
    return model.eval()


def _botorch_posterior(**options: Any) -> Built:
    model = _botorch_gp(**options)

    def posterior_mean(x: torch.Tensor) -> torch.Tensor:
        return model.posterior(x).mean

    return posterior_mean, (torch.rand(4, 2, dtype=torch.float64),), {}


def _botorch_acquisition(name: str, **options: Any) -> Built:
    from botorch import acquisition
    from botorch.sampling import SobolQMCNormalSampler

    model = _botorch_gp()
    if name.startswith("q"):
        options = {"sampler": SobolQMCNormalSampler(sample_shape=torch.Size([16]), seed=0), **options}
    if name in ("ExpectedImprovement", "LogExpectedImprovement", "qExpectedImprovement",
                "qLogExpectedImprovement", "qProbabilityOfImprovement"):
        options = {"best_f": model.train_targets.max(), **options}
    if name == "UpperConfidenceBound":
        options = {"beta": 0.2, **options}
    function = getattr(acquisition, name)(model, **options)
    q = 2 if name.startswith("q") else 1
    return function, (torch.rand(3, q, 2, dtype=torch.float64),), {}


def _botorch_test_function(name: str, **options: Any) -> Built:
    from botorch import test_functions

    function = getattr(test_functions, name)(**options)
    low, high = function.bounds
    return function, (low + (high - low) * torch.rand(5, function.dim, dtype=low.dtype),), {}


def _botorch_normalize() -> Built:
    from botorch.models.transforms.input import Normalize

    return Normalize(d=3), (torch.rand(6, 3, dtype=torch.float64),), {}


BOTORCH = [
    Spec("gp_posterior", _botorch_posterior),
    Spec("gp_posterior_fixed_noise_normalized", partial(_botorch_posterior, fixed_noise=True, input_transform=True)),
    Spec("expected_improvement", partial(_botorch_acquisition, "ExpectedImprovement")),
    Spec("log_expected_improvement", partial(_botorch_acquisition, "LogExpectedImprovement")),
    Spec("upper_confidence_bound", partial(_botorch_acquisition, "UpperConfidenceBound")),
    Spec("q_expected_improvement", partial(_botorch_acquisition, "qExpectedImprovement")),
    Spec("q_log_expected_improvement", partial(_botorch_acquisition, "qLogExpectedImprovement")),
    Spec("hartmann_noisy", partial(_botorch_test_function, "Hartmann", dim=6, noise_std=0.1)),
    Spec("branin", partial(_botorch_test_function, "Branin")),
    Spec("normalize_train", _botorch_normalize, train=True),
]


# performer-pytorch -------------------------------------------------------------------------------

def _performer_lm(**options: Any) -> Built:
    from performer_pytorch import PerformerLM

    model = PerformerLM(num_tokens=100, max_seq_len=32, dim=16, depth=2, heads=2, dim_head=8, nb_features=8,
                        **options)
    return model, (_tokens(length=12),), {"mask": torch.ones(2, 12, dtype=torch.bool)}


def _performer_enc_dec() -> Built:
    from performer_pytorch import PerformerEncDec

    model = PerformerEncDec(dim=16, enc_num_tokens=100, enc_depth=1, enc_heads=2, enc_dim_head=8,
                            enc_max_seq_len=32, enc_nb_features=8, dec_num_tokens=100, dec_depth=1, dec_heads=2,
                            dec_dim_head=8, dec_max_seq_len=32, dec_nb_features=8)
    return model, (_tokens(length=12), _tokens(length=8)), {"enc_mask": torch.ones(2, 12, dtype=torch.bool)}


PERFORMER = [
    Spec("performer_lm", _performer_lm),
    Spec("performer_lm_causal", partial(_performer_lm, causal=True)),
    Spec("performer_lm_local_heads", partial(_performer_lm, local_attn_heads=1, local_window_size=4)),
    Spec("performer_lm_generalized", partial(_performer_lm, generalized_attention=True, rotary_position_emb=False,
                                             use_scalenorm=True, ff_glu=True)),
    Spec("performer_lm_shift_rezero", partial(_performer_lm, shift_tokens=True, use_rezero=True, ff_chunks=2,
                                              no_projection=True)),
    Spec("performer_lm_train_redraw", partial(_performer_lm, feature_redraw_interval=1, reversible=True),
         train=True),
    Spec("performer_enc_dec", _performer_enc_dec),
]


# rotary-embedding-torch --------------------------------------------------------------------------

def _rotary(method: str, **options: Any) -> Built:
    from rotary_embedding_torch import RotaryEmbedding

    rotary = RotaryEmbedding(dim=8, cache_max_seq_len=64, **options)
    q, k = torch.randn(2, 2, 10, 16), torch.randn(2, 2, 10, 16)
    if method == "rotate_queries_with_cached_keys":
        return rotary.rotate_queries_with_cached_keys, (q[..., -3:, :], k), {}
    if method == "rotate_queries_and_keys":
        return rotary.rotate_queries_and_keys, (q, k), {}
    if method == "get_axial_freqs":
        def axial(image: torch.Tensor) -> torch.Tensor:
            from rotary_embedding_torch import apply_rotary_emb

            return apply_rotary_emb(rotary.get_axial_freqs(6, 6), image)

        return axial, (torch.randn(2, 6, 6, 16),), {}
    if options.get("seq_before_head_dim"):
        q = q.transpose(1, 2)
    return rotary.rotate_queries_or_keys, (q,), {}


def _learned_rotations() -> Built:
    from rotary_embedding_torch import apply_learned_rotations

    return apply_learned_rotations, (torch.randn(2, 10, 4), torch.randn(2, 10, 16)), {
        "freq_ranges": torch.arange(2).float()}


ROTARY = [
    Spec("rotate_queries", partial(_rotary, "rotate_queries_or_keys")),
    Spec("rotate_queries_seq_first", partial(_rotary, "rotate_queries_or_keys", seq_before_head_dim=True)),
    Spec("rotate_queries_learned_freq", partial(_rotary, "rotate_queries_or_keys", learned_freq=True), train=True),
    Spec("rotate_queries_and_keys_xpos", partial(_rotary, "rotate_queries_and_keys", use_xpos=True)),
    Spec("rotate_cached_keys", partial(_rotary, "rotate_queries_with_cached_keys")),
    Spec("axial_freqs_pixel", partial(_rotary, "get_axial_freqs", freqs_for="pixel", max_freq=8)),
    Spec("learned_rotations", _learned_rotations),
]


# mixture-of-experts ------------------------------------------------------------------------------

def _mixture_of_experts(hierarchical: bool = False, **options: Any) -> Built:
    from mixture_of_experts import HeirarchicalMoE, MoE

    if hierarchical:
        model = HeirarchicalMoE(dim=16, num_experts=(2, 2), hidden_dim=32, **options)
    else:
        model = MoE(dim=16, num_experts=4, hidden_dim=32, **options)
    return model, (torch.randn(2, 8, 16),), {}


MIXTURE_OF_EXPERTS = [
    Spec("moe", _mixture_of_experts),
    Spec("moe_no_second", partial(_mixture_of_experts, second_policy_eval="none")),
    Spec("moe_all", partial(_mixture_of_experts, second_policy_eval="all")),
    Spec("moe_train", _mixture_of_experts, train=True),
    Spec("hierarchical_moe", partial(_mixture_of_experts, hierarchical=True)),
    Spec("hierarchical_moe_train", partial(_mixture_of_experts, hierarchical=True), train=True),
]


# linear-attention-transformer --------------------------------------------------------------------

def _linear_attention_lm(linformer_k: int | None = None, **options: Any) -> Built:
    from linear_attention_transformer import LinearAttentionTransformerLM, LinformerSettings

    if linformer_k is not None:
        options["linformer_settings"] = LinformerSettings(k=linformer_k)
    model = LinearAttentionTransformerLM(num_tokens=100, dim=16, depth=2, max_seq_len=16, heads=2, dim_head=8,
                                         **options)
    return model, (_tokens(length=16),), {"input_mask": torch.ones(2, 16, dtype=torch.bool)}


def _image_linear_attention() -> Built:
    from linear_attention_transformer import ImageLinearAttention

    return ImageLinearAttention(chan=4, key_dim=8, value_dim=8, heads=2), (torch.randn(2, 4, 6, 6),), {}


LINEAR_ATTENTION = [
    Spec("linear_attention_lm", _linear_attention_lm),
    Spec("linear_attention_lm_causal", partial(_linear_attention_lm, causal=True, blindspot_size=2)),
    Spec("linear_attention_lm_local_heads", partial(_linear_attention_lm, causal=True, n_local_attn_heads=1,
                                                    local_attn_window_size=4)),
    Spec("linear_attention_lm_linformer", partial(_linear_attention_lm, linformer_k=4)),
    Spec("linear_attention_lm_rotary_shift", partial(_linear_attention_lm, use_rotary_emb=True, shift_tokens=True,
                                                     ff_chunks=2, ff_glu=True)),
    Spec("linear_attention_lm_reversible_train", partial(_linear_attention_lm, reversible=True, attn_dropout=0.1),
         train=True),
    Spec("image_linear_attention", _image_linear_attention),
]


# hyper-connections -------------------------------------------------------------------------------

def _hyper_connections(kind: str = "hc", decorate: bool = False, **options: Any) -> Built:
    import hyper_connections

    functions = {"hc": hyper_connections.get_init_and_expand_reduce_stream_functions,
                 "mhc": hyper_connections.mc_get_init_and_expand_reduce_stream_functions}[kind]
    init_connection, expand, reduce = functions(4, dim=16, **options)
    if decorate:  # the branch is called by the user between the width and the depth connection
        connection, branch = init_connection(layer_index=0), torch.nn.Linear(16, 16)

        def decorated(x: torch.Tensor) -> torch.Tensor:
            branch_input, add_residual = connection(expand(x))
            return reduce(add_residual(branch(branch_input)))

        return decorated, (torch.randn(2, 8, 16),), {}
    blocks = torch.nn.ModuleList(init_connection(branch=torch.nn.Linear(16, 16), layer_index=index)
                                 for index in range(2))
    model = torch.nn.Sequential(expand, *blocks, reduce)
    return model, (torch.randn(2, 8, 16),), {}


def _hyper_connections_vit() -> Built:
    from hyper_connections.vit import ViT

    model = ViT(image_size=8, patch_size=4, num_classes=10, dim=16, depth=2, heads=2, dim_head=8, mlp_dim=32,
                num_residual_streams=2)
    return model, (torch.randn(2, 3, 8, 8),), {}


HYPER_CONNECTIONS = [
    Spec("hyper_connections", _hyper_connections),
    Spec("hyper_connections_fracs", partial(_hyper_connections, num_fracs=2)),
    Spec("hyper_connections_stream_embed", partial(_hyper_connections, add_stream_embed=True)),
    Spec("hyper_connections_decorated", partial(_hyper_connections, decorate=True)),
    Spec("mhc", partial(_hyper_connections, "mhc", sinkhorn_iters=4)),
    Spec("mhc_log_domain_train", partial(_hyper_connections, "mhc", sinkhorn_iters=4, log_domain_sinkhorn=True),
         train=True),
    Spec("mhc_vit", _hyper_connections_vit),
]


# Held-out libraries of the next round ------------------------------------------------------------

# routing-transformer -----------------------------------------------------------------------------

def _routing_lm(autopad: bool = False, length: int = 16, **options: Any) -> Built:
    from routing_transformer import Autopadder, RoutingTransformerLM

    model = RoutingTransformerLM(num_tokens=100, dim=16, depth=2, max_seq_len=16, heads=2, dim_head=8,
                                 window_size=4, **options)
    if autopad:
        model = Autopadder(model)
    return model, (_tokens(length=length),), {"input_mask": torch.ones(2, length, dtype=torch.bool)}


def _routing_enc_dec() -> Built:
    from routing_transformer import RoutingTransformerEncDec

    model = RoutingTransformerEncDec(dim=16, enc_num_tokens=100, enc_depth=1, enc_heads=2, enc_max_seq_len=16,
                                     enc_window_size=4, enc_dim_head=8, dec_num_tokens=100, dec_depth=1,
                                     dec_heads=2, dec_max_seq_len=16, dec_window_size=4, dec_dim_head=8)
    return model, (_tokens(length=16), _tokens(length=16)), {"return_loss": True}


ROUTING_TRANSFORMER = [
    Spec("routing_lm", _routing_lm),
    Spec("routing_lm_causal_local_heads", partial(_routing_lm, causal=True, n_local_attn_heads=1)),
    Spec("routing_lm_train", partial(_routing_lm, causal=True), train=True),
    Spec("routing_lm_mem_kv_shared_qk", partial(_routing_lm, num_mem_kv=2, shared_qk=True, rel_pos_emb=False,
                                                use_scale_norm=True, ff_glu=True)),
    Spec("routing_lm_reversible_shift_train", partial(_routing_lm, reversible=True, shift_tokens=True, ff_chunks=2,
                                                      use_rezero=True), train=True),
    Spec("routing_lm_autopadded", partial(_routing_lm, autopad=True, length=13)),
    Spec("routing_enc_dec_loss", _routing_enc_dec, train=True),
]


# torchkbnufft ------------------------------------------------------------------------------------

def _kbnufft_trajectory(spokes: int = 4, points: int = 16, batch: int | None = None) -> torch.Tensor:
    """A radial trajectory in [-pi, pi): (2, spokes * points), or (batch, 2, ...) when batched."""
    radius = torch.linspace(-torch.pi, torch.pi * (points - 2) / points, points)
    angles = torch.arange(spokes) * torch.pi / spokes
    omega = torch.stack([torch.outer(angles.cos(), radius).flatten(), torch.outer(angles.sin(), radius).flatten()])
    return omega if batch is None else omega.unsqueeze(0).repeat(batch, 1, 1)


def _kbnufft(kind: str, batched: bool = False, smaps: bool = False, sparse: bool = False,
             norm: str | None = None) -> Built:
    import torchkbnufft as tkbn

    im_size = (8, 8)
    omega = _kbnufft_trajectory(batch=2 if batched else None)
    kwargs: dict[str, Any] = {"norm": norm}
    if smaps:
        kwargs["smaps"] = torch.randn(2, 3, *im_size, dtype=torch.complex64)
    if sparse:
        kwargs["interp_mats"] = tkbn.calc_tensor_spmatrix(omega, im_size=im_size)
    coils = 1 if smaps else 3
    if kind == "forward":
        image = torch.randn(2, coils, *im_size, dtype=torch.complex64)
        return tkbn.KbNufft(im_size=im_size), (image, omega), kwargs
    data = torch.randn(2, 3, omega.shape[-1], dtype=torch.complex64)
    return tkbn.KbNufftAdjoint(im_size=im_size), (data, omega), kwargs


def _kbnufft_toeplitz() -> Built:
    import torchkbnufft as tkbn

    kernel = tkbn.calc_toeplitz_kernel(_kbnufft_trajectory(), im_size=(8, 8))
    return tkbn.ToepNufft(), (torch.randn(2, 1, 8, 8, dtype=torch.complex64), kernel), {}


TORCHKBNUFFT = [
    Spec("nufft", partial(_kbnufft, "forward")),
    Spec("nufft_batched_trajectory_ortho", partial(_kbnufft, "forward", batched=True, norm="ortho")),
    Spec("nufft_smaps", partial(_kbnufft, "forward", smaps=True)),
    Spec("nufft_sparse_matrix", partial(_kbnufft, "forward", sparse=True)),
    Spec("adjoint_nufft", partial(_kbnufft, "adjoint")),
    Spec("adjoint_nufft_smaps_ortho", partial(_kbnufft, "adjoint", smaps=True, norm="ortho")),
    Spec("toeplitz_nufft", _kbnufft_toeplitz),
]


# FrEIA -------------------------------------------------------------------------------------------

def _freia_subnet(dims_in: int, dims_out: int) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(dims_in, 16), torch.nn.ReLU(), torch.nn.Linear(16, dims_out))


def _freia_conv_subnet(channels_in: int, channels_out: int) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Conv2d(channels_in, 8, 3, padding=1), torch.nn.ReLU(),
                               torch.nn.Conv2d(8, channels_out, 3, padding=1))


def _freia_sequence(block: str, reverse: bool = False, conditional: bool = False, **options: Any) -> Built:
    import FrEIA.framework as Ff
    import FrEIA.modules as Fm

    inn = Ff.SequenceINN(4)
    for _ in range(2):
        if conditional:
            inn.append(getattr(Fm, block), cond=0, cond_shape=(3,), subnet_constructor=_freia_subnet, **options)
        else:
            inn.append(getattr(Fm, block), subnet_constructor=_freia_subnet, **options)
        inn.append(Fm.PermuteRandom, seed=0)
    kwargs: dict[str, Any] = {"rev": reverse}
    if conditional:
        kwargs["c"] = [torch.randn(5, 3)]
    return inn, (torch.randn(5, 4),), kwargs


def _freia_graph() -> Built:
    import FrEIA.framework as Ff
    import FrEIA.modules as Fm

    nodes = [Ff.InputNode(2, 8, 8, name="input")]
    nodes.append(Ff.Node(nodes[-1], Fm.IRevNetDownsampling, {}, name="down"))
    nodes.append(Ff.Node(nodes[-1], Fm.GLOWCouplingBlock, {"subnet_constructor": _freia_conv_subnet, "clamp": 1.5}))
    nodes.append(Ff.Node(nodes[-1], Fm.ActNorm, {}))
    nodes.append(Ff.Node(nodes[-1], Fm.Flatten, {}))
    split = Ff.Node(nodes[-1], Fm.Split, {"section_sizes": [64, 64], "dim": 0})
    first = Ff.Node(split.out0, Fm.AllInOneBlock, {"subnet_constructor": _freia_subnet, "permute_soft": True})
    merged = Ff.Node([first.out0, split.out1], Fm.Concat, {"dim": 0})
    nodes += [split, first, merged, Ff.OutputNode(merged, name="output")]
    return Ff.GraphINN(nodes), (torch.randn(3, 2, 8, 8),), {}


def _freia_iresnet() -> Built:
    import FrEIA.framework as Ff
    import FrEIA.modules as Fm

    inn = Ff.SequenceINN(4)
    inn.append(Fm.IResNetLayer, hutchinson_samples=2, internal_size=8, n_internal_layers=1,
               jacobian_iterations=3, fixed_point_iterations=4, lipschitz_iterations=2)
    inn.append(Fm.ActNorm)
    return inn, (torch.randn(5, 4),), {}


FREIA = [
    Spec("all_in_one", partial(_freia_sequence, "AllInOneBlock", affine_clamping=1.5, gin_block=True,
                               global_affine_type="SOFTPLUS")),
    Spec("all_in_one_soft_permute_reverse", partial(_freia_sequence, "AllInOneBlock", reverse=True,
                                                    permute_soft=True, learned_householder_permutation=2)),
    Spec("glow_conditional", partial(_freia_sequence, "GLOWCouplingBlock", conditional=True, clamp=2.0)),
    Spec("rnvp_reverse", partial(_freia_sequence, "RNVPCouplingBlock", reverse=True)),
    Spec("nice_train", partial(_freia_sequence, "NICECouplingBlock"), train=True),
    Spec("gin_one_sided", partial(_freia_sequence, "GINCouplingBlock", clamp_activation="TANH")),
    Spec("graph_inn_conv", _freia_graph),
    Spec("iresnet_train", _freia_iresnet, train=True),
]


# tab-transformer-pytorch -------------------------------------------------------------------------

def _tab_inputs(batch: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    categories = torch.stack([torch.randint(0, size, (batch,)) for size in (5, 3, 4)], dim=-1)
    return categories, torch.randn(batch, 6)


def _tab_transformer(**options: Any) -> Built:
    from tab_transformer_pytorch import TabTransformer

    options = {"mlp_act": torch.nn.ReLU(), **options}
    model = TabTransformer(categories=(5, 3, 4), num_continuous=6, dim=16, depth=2, heads=2, dim_head=8,
                           dim_out=2, mlp_hidden_mults=(2,), **options)
    return model, _tab_inputs(), {}


def _ft_transformer(return_attn: bool = False, **options: Any) -> Built:
    from tab_transformer_pytorch import FTTransformer

    model = FTTransformer(categories=(5, 3, 4), num_continuous=6, dim=16, depth=2, heads=2, dim_head=8,
                          dim_out=2, **options)
    return model, _tab_inputs(), {"return_attn": return_attn}


TAB_TRANSFORMER = [
    Spec("tab_transformer", _tab_transformer),
    Spec("tab_transformer_mean_std_no_shared", partial(_tab_transformer, continuous_mean_std=torch.ones(6, 2),
                                                       use_shared_categ_embed=False, num_residual_streams=1)),
    Spec("tab_transformer_train", partial(_tab_transformer, attn_dropout=0.1, ff_dropout=0.1,
                                          mlp_act=torch.nn.SiLU()), train=True),
    Spec("ft_transformer", _ft_transformer),
    Spec("ft_transformer_return_attn", partial(_ft_transformer, return_attn=True, num_residual_streams=1)),
    Spec("ft_transformer_train", partial(_ft_transformer, attn_dropout=0.1, ff_dropout=0.1), train=True),
]


# deepxde -----------------------------------------------------------------------------------------

def _deepxde() -> Any:
    import os

    os.environ.setdefault("DDE_BACKEND", "pytorch")  # read once, when deepxde is first imported
    import deepxde

    return deepxde


def _deepxde_fnn(kind: str = "FNN", transforms: bool = False, **options: Any) -> Built:
    dde = _deepxde()
    if kind == "PFNN":
        net = dde.nn.PFNN([2, [8, 8], [8, 8], 2], "tanh", "Glorot uniform")
    else:
        net = dde.nn.FNN([2, 16, 16, 2], options.pop("activation", "tanh"), "Glorot normal", **options)
    if transforms:
        net.apply_feature_transform(lambda x: torch.cat([x, torch.sin(x)], dim=1)[:, :2])
        net.apply_output_transform(lambda x, y: x[:, 0:1] * y)
    return net, (torch.rand(6, 2),), {}


def _deepxde_deeponet(kind: str, **options: Any) -> Built:
    dde = _deepxde()
    if kind == "DeepONet":
        net = dde.nn.DeepONet([5, 16, 16], [2, 16, 16], "relu", "Glorot normal", **options)
        return net, ((torch.rand(6, 5), torch.rand(6, 2)),), {}
    if kind == "MIONetCartesianProd":
        net = dde.nn.MIONetCartesianProd([5, 16], [4, 16], [2, 16, 16], "relu", "Glorot normal", **options)
        return net, ((torch.rand(3, 5), torch.rand(3, 4), torch.rand(7, 2)),), {}
    net = dde.nn.DeepONetCartesianProd([5, 16, 16], [2, 16, 16], {"branch": "relu", "trunk": "tanh"},
                                       "Glorot normal", **options)
    return net, ((torch.rand(3, 5), torch.rand(7, 2)),), {}


def _deepxde_pde_residual() -> Built:
    dde = _deepxde()
    net = dde.nn.FNN([2, 16, 1], "tanh", "Glorot normal")

    def residual(x: torch.Tensor) -> torch.Tensor:
        y = net(x)
        dy_t = dde.grad.jacobian(y, x, i=0, j=1)
        dy_xx = dde.grad.hessian(y, x, i=0, j=0)
        return dy_t - 0.01 * dy_xx

    return residual, (torch.rand(6, 2, requires_grad=True),), {}


DEEPXDE = [
    Spec("fnn", _deepxde_fnn),
    Spec("fnn_transforms_activation_list_train", partial(_deepxde_fnn, transforms=True,
                                                         activation=["tanh", "LAAF-5 sin", None]), train=True),
    Spec("pfnn", partial(_deepxde_fnn, "PFNN")),
    Spec("deeponet", partial(_deepxde_deeponet, "DeepONet")),
    Spec("deeponet_split_both", partial(_deepxde_deeponet, "DeepONet", num_outputs=2,
                                        multi_output_strategy="split_both")),
    Spec("deeponet_cartesian_independent", partial(_deepxde_deeponet, "DeepONetCartesianProd", num_outputs=2,
                                                   multi_output_strategy="independent")),
    Spec("mionet_cartesian", partial(_deepxde_deeponet, "MIONetCartesianProd", merge_operation="add")),
    Spec("pde_residual", _deepxde_pde_residual, train=True),
]


# auraloss ----------------------------------------------------------------------------------------

def _audio_loss(dotted: str, channels: int = 1, length: int = 4096, **options: Any) -> Built:
    import importlib

    module, name = dotted.rsplit(".", 1)
    loss = getattr(importlib.import_module(f"auraloss.{module}"), name)(**options)
    return loss, (torch.randn(2, channels, length), torch.randn(2, channels, length)), {}


AURALOSS = [
    Spec("stft", partial(_audio_loss, "freq.STFTLoss", fft_size=256, hop_size=64, win_length=256)),
    Spec("stft_perceptual_full", partial(_audio_loss, "freq.STFTLoss", fft_size=256, hop_size=64, win_length=256,
                                         perceptual_weighting=True, sample_rate=16000, output="full")),
    Spec("multi_resolution_stft", partial(_audio_loss, "freq.MultiResolutionSTFTLoss", fft_sizes=[256, 128],
                                          hop_sizes=[64, 32], win_lengths=[256, 128])),
    Spec("random_resolution_stft", partial(_audio_loss, "freq.RandomResolutionSTFTLoss", resolutions=2,
                                           min_fft_size=64, max_fft_size=256)),
    Spec("sum_and_difference_stft", partial(_audio_loss, "freq.SumAndDifferenceSTFTLoss", channels=2,
                                            fft_sizes=[256, 128], hop_sizes=[64, 32], win_lengths=[256, 128])),
    Spec("sisdr", partial(_audio_loss, "time.SISDRLoss")),
    Spec("sdsdr_esr_dc", partial(_audio_loss, "time.SDSDRLoss", zero_mean=False)),
    Spec("snr_train", partial(_audio_loss, "time.SNRLoss"), train=True),
    Spec("logcosh", partial(_audio_loss, "time.LogCoshLoss")),
]


# julius ------------------------------------------------------------------------------------------

def _julius(name: str, *args: Any, function: bool = False, **options: Any) -> Built:
    import julius

    signal = torch.randn(2, 1, 400)
    if function:
        return getattr(julius, name), (signal, *args), options
    return getattr(julius, name)(*args, **options), (signal,), {}


JULIUS = [
    Spec("resample_frac", partial(_julius, "resample_frac", 4, 5, function=True)),
    Spec("resample_module_output_length", partial(_julius, "ResampleFrac", 3, 2, zeros=8)),
    Spec("lowpass_filter", partial(_julius, "lowpass_filter", 0.1, function=True)),
    Spec("lowpass_filters_fft", partial(_julius, "LowPassFilters", [0.05, 0.2], fft=True)),
    Spec("highpass_filters", partial(_julius, "HighPassFilters", [0.1, 0.3], stride=2)),
    Spec("bandpass_filter", partial(_julius, "BandPassFilter", 0.05, 0.2)),
    Spec("split_bands", partial(_julius, "SplitBands", 16000, n_bands=4)),
    Spec("fft_conv1d", lambda: (__import__("julius").fft_conv1d, (torch.randn(2, 3, 300), torch.randn(4, 3, 32)),
                                {"stride": 2})),
]


# ncps --------------------------------------------------------------------------------------------

def _ncps(kind: str, wired: bool = False, **options: Any) -> Built:
    from ncps import torch as ncps_torch
    from ncps.wirings import AutoNCP

    units = AutoNCP(12, 3) if wired else 12
    model = getattr(ncps_torch, kind)(5, units, **options)
    return model, (torch.randn(2, 7, 5),), {}


NCPS = [
    Spec("cfc", partial(_ncps, "CfC")),
    Spec("cfc_no_gate_mixed_memory", partial(_ncps, "CfC", mode="no_gate", mixed_memory=True)),
    Spec("cfc_pure_wired", partial(_ncps, "CfC", wired=True, mode="pure")),
    Spec("ltc", partial(_ncps, "LTC")),
    Spec("ltc_wired_train", partial(_ncps, "LTC", wired=True, ode_unfolds=2), train=True),
]


# conformer ---------------------------------------------------------------------------------------

def _conformer(block: bool = False, mask: bool = False, **options: Any) -> Built:
    from conformer import Conformer, ConformerBlock

    model = ConformerBlock(dim=32, dim_head=8, heads=2, **options) if block else Conformer(
        dim=32, depth=2, dim_head=8, heads=2, **options)
    masks = {"mask": torch.tensor([[True] * 10, [True] * 6 + [False] * 4])} if mask else {}
    return model, (torch.randn(2, 10, 32),), masks


CONFORMER = [
    Spec("conformer", _conformer),
    Spec("conformer_block_masked", partial(_conformer, block=True, mask=True)),
    Spec("conformer_causal_train", partial(_conformer, conv_causal=True, attn_dropout=0.1, ff_dropout=0.1),
         train=True),
]


# pytorch-msssim ----------------------------------------------------------------------------------

def _msssim(name: str, size: int = 32, **options: Any) -> Built:
    import pytorch_msssim

    images = (torch.rand(2, 3, size, size), torch.rand(2, 3, size, size))
    if name[0].isupper():
        return getattr(pytorch_msssim, name)(data_range=1.0, channel=3, **options), images, {}
    return getattr(pytorch_msssim, name), images, {"data_range": 1.0, **options}


MSSSIM = [
    Spec("ssim", partial(_msssim, "ssim")),
    Spec("ssim_module_no_average", partial(_msssim, "SSIM", size_average=False)),
    Spec("ms_ssim", partial(_msssim, "ms_ssim", size=180, win_size=7)),
    Spec("ms_ssim_module_weights", partial(_msssim, "MS_SSIM", size=180, win_size=7,
                                           weights=[0.2, 0.2, 0.2, 0.2, 0.2])),
]


# timm --------------------------------------------------------------------------------------------

def _timm(name: str, size: int = 224, **options: Any) -> Built:
    import timm

    model = timm.create_model(name, pretrained=False, num_classes=10, **options)
    return model, (torch.randn(1, 3, size, size),), {}


TIMM = [Spec(name, partial(_timm, name, size)) for name, size in (
    ("resnet18", 64), ("efficientnet_b0", 64), ("mobilenetv3_small_050", 64), ("regnetx_002", 64),
    ("ghostnet_100", 64), ("rexnet_100", 64), ("dla34", 64), ("nfnet_l0", 64), ("tresnet_m", 64),
    ("convnext_atto", 64), ("poolformer_s12", 64), ("repvit_m1", 64), ("inception_next_tiny", 64),
    ("mambaout_femto", 64), ("hrnet_w18_small", 64), ("edgenext_xx_small", 64), ("mobilevit_xxs", 64),
    ("fastvit_t8", 64), ("vit_tiny_patch16_224", 224), ("eva02_tiny_patch14_224", 224),
    ("cait_xxs24_224", 224), ("xcit_nano_12_p16_224", 224), ("levit_128s", 224), ("pit_ti_224", 224),
    ("crossvit_tiny_240", 240), ("swin_tiny_patch4_window7_224", 224), ("maxvit_nano_rw_256", 256),
    ("coatnet_nano_rw_224", 224), ("twins_pcpvt_small", 224), ("hiera_tiny_224", 224),
    ("gcvit_xxtiny", 224), ("sequencer2d_s", 224),
)]


# vit-pytorch -------------------------------------------------------------------------------------

_VIT = dict(image_size=32, patch_size=8, num_classes=10, dim=32, depth=2, heads=2, mlp_dim=64, dim_head=16)
_VIDEO = dict(image_patch_size=8, frames=4, frame_patch_size=2)


def _vit(module: str, name: str, size: int = 32, drop: tuple[str, ...] = (), **options: Any) -> Built:
    import importlib

    model = getattr(importlib.import_module(f"vit_pytorch.{module}"), name)(
        **{key: value for key, value in {**_VIT, **options}.items() if key not in drop})
    shape = (1, 3, options["frames"], size, size) if "frames" in options else (1, 3, size, size)
    return model, (torch.randn(*shape),), {}


VIT_PYTORCH = [Spec(module, partial(_vit, module, name)) for module, name in (
    ("vit", "ViT"), ("simple_vit", "SimpleViT"), ("deepvit", "DeepViT"), ("jet_vit", "JetViT"),
    ("jumbo_vit", "JumboViT"), ("learnable_memory_vit", "ViT"), ("mp3", "ViT"),
    ("na_vit", "NaViT"), ("na_vit_nested_tensor", "NaViT"), ("normalized_vit", "nViT"), ("parallel_vit", "ViT"),
    ("rvt", "RvT"), ("simple_flash_attn_vit", "SimpleViT"), ("simple_uvit", "SimpleUViT"),
    ("simple_vit_attn_residual", "SimpleViTAttnResidual"), ("simple_vit_orthog_residual_update", "SimpleViT"),
    ("simple_vit_with_patch_dropout", "SimpleViT"), ("simple_vit_with_qk_norm", "SimpleViT"),
    ("simple_vit_with_register_tokens", "SimpleViT"), ("simple_vit_with_relative_proj_pos_bias", "SimpleViT"),
    ("simple_vit_with_sparse_gating", "SimpleViTWithSparseGating"), ("simple_vit_with_specialized_cls", "SimpleViT"),
    ("simple_vit_with_value_residual", "SimpleViT"), ("attn_residual_with_dca_simple_vit", "SimpleViT"),
    ("vat", "ViT"), ("vit_5", "ViT"), ("vit_detpool", "ViTDetPool"),
    ("vit_for_small_dataset", "ViT"), ("vit_with_decorr", "ViT"), ("vit_with_keel_post_ln", "ViT"),
    ("vit_with_patch_dropout", "ViT"), ("vit_with_patch_merger", "ViT"),
)] + [
    Spec("cait", partial(_vit, "cait", "CaiT", cls_depth=1)),
    Spec("xcit", partial(_vit, "xcit", "XCiT", cls_depth=1)),
    Spec("pit", partial(_vit, "pit", "PiT", depth=(1, 1))),
    Spec("nest", partial(_vit, "nest", "NesT", drop=("depth", "mlp_dim", "dim_head"), patch_size=4,
                         num_hierarchies=2, block_repeats=(1, 1))),
    Spec("mobile_vit", partial(_vit, "mobile_vit", "MobileViT", size=64,
                               drop=("patch_size", "depth", "heads", "mlp_dim", "dim_head", "dim"),
                               image_size=(64, 64), dims=[32, 32, 48],
                               channels=[8, 8, 16, 16, 24, 24, 32, 32, 48, 48, 64])),
    Spec("vit_3d", partial(_vit, "vit_3d", "ViT", drop=("patch_size",), **_VIDEO)),
    Spec("simple_vit_3d", partial(_vit, "simple_vit_3d", "SimpleViT", drop=("patch_size",), **_VIDEO)),
    Spec("vivit", partial(_vit, "vivit", "ViViT", drop=("patch_size", "depth"), spatial_depth=1,
                          temporal_depth=1, **_VIDEO)),
    Spec("ats_vit", partial(_vit, "ats_vit", "ViT", max_tokens_per_depth=(16, 8))),
    Spec("simple_vit_with_hyper_connections", partial(_vit, "simple_vit_with_hyper_connections", "SimpleViT",
                                                      num_residual_streams=2)),
    Spec("wwt", partial(_vit, "wwt", "WWT", num_slots=4)),
    Spec("looped_vit", partial(_vit, "looped_vit", "LoopedViT", drop=("depth",), pre_loop_depth=1,
                               num_looped_blocks=1, post_loop_depth=1, loop_depth=2)),
    Spec("t2t", partial(_vit, "t2t", "T2TViT", drop=("patch_size",))),
]


# segmentation-models-pytorch ---------------------------------------------------------------------

def _smp(arch: str, encoder: str, size: int = 64) -> Built:
    import segmentation_models_pytorch as smp

    model = getattr(smp, arch)(encoder_name=encoder, encoder_weights=None, classes=2)
    return model, (torch.randn(1, 3, size, size),), {}


def _smp_loss(name: str, binary: bool = False, **options: Any) -> Built:
    import segmentation_models_pytorch as smp

    loss = getattr(smp.losses, name)(**options)
    logits, target = torch.randn(2, 3, 16, 16), torch.randint(0, 3, (2, 16, 16))
    if binary:
        logits, target = logits[:, :1], (target[:, None] > 0).float()
    return loss, (logits, target), {}


SMP = [Spec(f"{arch.lower()}_{encoder.replace('-', '_')}", partial(_smp, arch, encoder, size)) for arch, encoder, size in (
    ("Unet", "efficientnet-b0", 64), ("Unet", "mit_b0", 64), ("Unet", "tu-resnet18", 64),
    ("UnetPlusPlus", "efficientnet-b0", 64), ("FPN", "efficientnet-b0", 64), ("FPN", "mit_b0", 64),
    ("PSPNet", "efficientnet-b0", 64), ("DeepLabV3", "efficientnet-b0", 64),
    ("DeepLabV3Plus", "tu-regnetx_002", 64), ("Linknet", "efficientnet-b0", 64), ("MAnet", "efficientnet-b0", 64),
    ("PAN", "tu-resnet18", 128), ("UPerNet", "efficientnet-b0", 64), ("Segformer", "mit_b0", 64),
    ("DPT", "tu-regnetx_002", 64),
)] + [
    Spec("dice_loss", partial(_smp_loss, "DiceLoss", mode="multiclass")),
    Spec("jaccard_loss", partial(_smp_loss, "JaccardLoss", mode="multiclass")),
    Spec("focal_loss", partial(_smp_loss, "FocalLoss", mode="multiclass")),
    Spec("tversky_loss", partial(_smp_loss, "TverskyLoss", mode="multiclass")),
    Spec("lovasz_loss", partial(_smp_loss, "LovaszLoss", mode="multiclass")),
    Spec("dice_loss_binary", partial(_smp_loss, "DiceLoss", binary=True, mode="binary")),
    Spec("soft_bce_loss", partial(_smp_loss, "SoftBCEWithLogitsLoss", binary=True)),
]


# nnAudio -----------------------------------------------------------------------------------------

def _nnaudio(name: str, length: int = 4096, **options: Any) -> Built:
    from nnAudio import features

    return getattr(features, name)(verbose=False, **options), (torch.randn(2, length),), {}


def _nnaudio_inverse(**options: Any) -> Built:
    """iSTFT of a spectrogram the library's own STFT makes."""
    from nnAudio import features

    stft = features.STFT(n_fft=256, hop_length=64, freq_scale="no", iSTFT=True, output_format="Complex",
                         verbose=False)
    spectrogram = stft(torch.randn(2, 4096))  # n_fft // 2 + 1 bins: `onesided`
    return features.iSTFT(n_fft=256, hop_length=64, verbose=False, **options), (spectrogram,), {"onesided": True}


NNAUDIO = [
    Spec("stft_magnitude", partial(_nnaudio, "STFT", n_fft=256, hop_length=64, output_format="Magnitude")),
    Spec("stft_complex_log", partial(_nnaudio, "STFT", n_fft=256, hop_length=64, freq_scale="log", sr=16000,
                                     fmin=50, fmax=6000, output_format="Complex")),
    Spec("stft_phase_trainable", partial(_nnaudio, "STFT", n_fft=256, hop_length=64, trainable=True,
                                         output_format="Phase"), train=True),
    Spec("istft", _nnaudio_inverse),
    Spec("istft_refresh_window", partial(_nnaudio_inverse, refresh_win=False)),
    Spec("mel", partial(_nnaudio, "MelSpectrogram", sr=16000, n_fft=512, n_mels=32, hop_length=128)),
    Spec("mel_trainable", partial(_nnaudio, "MelSpectrogram", sr=16000, n_fft=512, n_mels=32, hop_length=128,
                                  trainable_mel=True, trainable_STFT=True), train=True),
    Spec("mfcc", partial(_nnaudio, "MFCC", sr=16000, n_mfcc=13, n_fft=512, n_mels=32, hop_length=128)),
    Spec("gammatone", partial(_nnaudio, "Gammatonegram", sr=16000, n_fft=512, n_bins=32, hop_length=128)),
    Spec("cqt1992v2", partial(_nnaudio, "CQT1992v2", sr=16000, hop_length=256, fmin=100, n_bins=24,
                              output_format="Magnitude")),
    Spec("cqt2010v2", partial(_nnaudio, "CQT2010v2", sr=16000, hop_length=256, fmin=100, n_bins=24,
                              output_format="Magnitude")),
    Spec("cqt2010v2_complex", partial(_nnaudio, "CQT2010v2", sr=16000, hop_length=256, fmin=100, n_bins=24,
                                      output_format="Complex", earlydownsample=False)),
    Spec("vqt", partial(_nnaudio, "VQT", sr=16000, hop_length=256, fmin=100, n_bins=24, output_format="Magnitude")),
]


# kymatio (its 1-D and 2-D torch frontends; `kymatio.torch` also imports the 3-D one, which needs
# `scipy.special.sph_harm`, gone from the SciPy installed here) ----------------------------------

def _scattering(dimensions: int, **options: Any) -> Built:
    if dimensions == 1:
        from kymatio.scattering1d.frontend.torch_frontend import ScatteringTorch1D

        return ScatteringTorch1D(**options), (torch.randn(2, options["shape"]),), {}
    from kymatio.scattering2d.frontend.torch_frontend import ScatteringTorch2D

    return ScatteringTorch2D(**options), (torch.randn(2, *options["shape"]),), {}


KYMATIO = [
    Spec("scattering1d", partial(_scattering, 1, J=4, shape=256, Q=4)),
    Spec("scattering1d_order1", partial(_scattering, 1, J=4, shape=256, Q=4, max_order=1)),
    Spec("scattering1d_list", partial(_scattering, 1, J=4, shape=256, Q=4, out_type="list")),
    Spec("scattering1d_unaveraged", partial(_scattering, 1, J=4, shape=256, Q=(4, 1), T=0, out_type="list")),
    Spec("scattering2d", partial(_scattering, 2, J=2, shape=(16, 16))),
    Spec("scattering2d_l4_order1", partial(_scattering, 2, J=2, shape=(16, 16), L=4, max_order=1)),
    Spec("scattering2d_list", partial(_scattering, 2, J=2, shape=(16, 16), out_type="list")),
]


# flow_matching -----------------------------------------------------------------------------------

class _Velocity(torch.nn.Module):
    """A small velocity field `v(x, t)`, as a user's model would be (outside the library)."""

    def __init__(self, dim: int = 4):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(dim + 1, 16), torch.nn.Tanh(), torch.nn.Linear(16, dim))

    def forward(self, x: torch.Tensor, t: torch.Tensor, **extras: Any) -> torch.Tensor:
        t = t.reshape(-1, 1).expand(x.shape[0], 1) if t.dim() <= 1 else t
        return self.net(torch.cat([x, t], dim=-1))


class _Denoiser(torch.nn.Module):
    """Posterior logits over a vocabulary for each token, as a discrete flow's model gives them."""

    def __init__(self, vocabulary: int = 6):
        super().__init__()
        self.embed = torch.nn.Embedding(vocabulary, 8)
        self.out = torch.nn.Linear(9, vocabulary)

    def forward(self, x: torch.Tensor, t: torch.Tensor, **extras: Any) -> torch.Tensor:
        h = self.embed(x)
        t = t.reshape(-1, 1, 1).expand(h.shape[0], h.shape[1], 1)
        return torch.softmax(self.out(torch.cat([h, t], dim=-1)), dim=-1)


def _flow_path(kind: str, method: str = "sample", **options: Any) -> Built:
    from flow_matching.path import AffineProbPath, GeodesicProbPath, MixtureDiscreteProbPath, scheduler
    from flow_matching.utils.manifolds import Sphere

    if kind == "geodesic":
        path = GeodesicProbPath(scheduler=scheduler.CondOTScheduler(), manifold=Sphere())
        x0, x1 = torch.nn.functional.normalize(torch.randn(8, 3), dim=-1), torch.nn.functional.normalize(
            torch.randn(8, 3), dim=-1)
    elif kind == "mixture":
        path = MixtureDiscreteProbPath(scheduler=scheduler.PolynomialConvexScheduler(n=2.0))
        x0, x1 = torch.randint(0, 6, (8, 5)), torch.randint(0, 6, (8, 5))
    else:
        path = AffineProbPath(scheduler=getattr(scheduler, kind)(**options))
        x0, x1 = torch.randn(8, 4), torch.randn(8, 4)
    t = torch.rand(8)
    if method == "sample":
        return lambda x_0, x_1, t: path.sample(x_0=x_0, x_1=x_1, t=t), (x0, x1, t), {}
    return getattr(path, method), (x1, x0, t[:, None]), {}  # a conversion: (given, x_t, t), t broadcasting


def _flow_solver(kind: str, **options: Any) -> Built:
    from flow_matching import solver
    from flow_matching.path import MixtureDiscreteProbPath, scheduler
    from flow_matching.utils.manifolds import Sphere

    grid = torch.tensor([0.0, 1.0])
    if kind == "ode":
        ode = solver.ODESolver(velocity_model=_Velocity())
        return partial(ode.sample, step_size=0.25, time_grid=grid, **options), (torch.randn(8, 4),), {}
    if kind == "likelihood":
        ode = solver.ODESolver(velocity_model=_Velocity())

        def log_p0(x: torch.Tensor) -> torch.Tensor:
            return -0.5 * x.pow(2).sum(-1)

        return (partial(ode.compute_likelihood, log_p0=log_p0, step_size=0.25, time_grid=torch.tensor([1.0, 0.0]),
                        exact_divergence=True), (torch.randn(8, 4),), {})
    if kind == "riemannian":
        ode = solver.RiemannianODESolver(manifold=Sphere(), velocity_model=_Velocity(3))
        x = torch.nn.functional.normalize(torch.randn(8, 3), dim=-1)
        return partial(ode.sample, step_size=0.25, time_grid=grid, **options), (x,), {}
    path = MixtureDiscreteProbPath(scheduler=scheduler.PolynomialConvexScheduler(n=2.0))
    discrete = solver.MixtureDiscreteEulerSolver(model=_Denoiser(), path=path, vocabulary_size=6)
    return partial(discrete.sample, step_size=0.25, time_grid=grid, **options), (torch.randint(0, 6, (4, 5)),), {}


def _flow_loss() -> Built:
    from flow_matching.loss import MixturePathGeneralizedKL
    from flow_matching.path import MixtureDiscreteProbPath, scheduler

    loss = MixturePathGeneralizedKL(path=MixtureDiscreteProbPath(scheduler=scheduler.PolynomialConvexScheduler(n=2.0)))
    return loss, (torch.randn(4, 5, 6), torch.randint(0, 6, (4, 5)), torch.randint(0, 6, (4, 5)), torch.rand(4)), {}


FLOW_MATCHING = [
    Spec("affine_condot", partial(_flow_path, "CondOTScheduler")),
    Spec("affine_cosine", partial(_flow_path, "CosineScheduler")),
    Spec("affine_vp", partial(_flow_path, "VPScheduler")),
    Spec("affine_linear_vp", partial(_flow_path, "LinearVPScheduler")),
    Spec("affine_polynomial", partial(_flow_path, "PolynomialConvexScheduler", n=3.0)),
    Spec("affine_target_to_velocity", partial(_flow_path, "CondOTScheduler", "target_to_velocity")),
    Spec("affine_epsilon_to_velocity", partial(_flow_path, "VPScheduler", "epsilon_to_velocity")),
    Spec("geodesic_sphere", partial(_flow_path, "geodesic")),
    Spec("mixture_discrete", partial(_flow_path, "mixture")),
    Spec("mixture_kl_loss", _flow_loss),
    Spec("ode_euler", partial(_flow_solver, "ode", method="euler")),
    Spec("ode_midpoint_intermediates", partial(_flow_solver, "ode", method="midpoint", return_intermediates=True)),
    Spec("ode_likelihood", partial(_flow_solver, "likelihood")),
    Spec("riemannian_ode", partial(_flow_solver, "riemannian")),
    Spec("discrete_euler", partial(_flow_solver, "discrete")),
]


# neuraloperator (imported as `neuralop`; its SFNO and LocalNO need torch-harmonics, not installed) ----

def _fno(dimensions: int = 2, size: int = 16, complex_data: bool = False, tucker: bool = False,
         **options: Any) -> Built:
    from neuralop.models import FNO, TFNO

    model = (TFNO if tucker else FNO)(n_modes=(6,) * dimensions, in_channels=3, out_channels=1, hidden_channels=12,
                                      n_layers=2, complex_data=complex_data, **options)
    dtype = torch.cfloat if complex_data else torch.float32
    return model, (torch.randn(2, 3, *(size,) * dimensions, dtype=dtype),), {}


def _uno() -> Built:
    from neuralop.models import UNO

    model = UNO(3, 3, 8, uno_out_channels=[8, 16, 8], uno_n_modes=[[4, 4]] * 3,
                uno_scalings=[[1, 1], [0.5, 0.5], [2, 2]], horizontal_skips_map={2: 0}, n_layers=3,
                domain_padding=0.2, channel_mlp_skip="linear")
    return model, (torch.randn(2, 3, 16, 16),), {}


def _uqno() -> Built:
    """Uncertainty quantification: a base FNO's prediction and a residual FNO's quantile, as a pair."""
    from neuralop.models import FNO, UQNO

    def fno() -> torch.nn.Module:
        return FNO(n_modes=(4, 4), in_channels=1, out_channels=1, hidden_channels=8, n_layers=2)

    return UQNO(base_model=fno(), residual_model=fno()), (torch.randn(2, 1, 16, 16),), {}


def _codano() -> Built:
    """Codomain attention over named physical variables, with their positional encodings."""
    from neuralop.models import CODANO

    layers = 2
    model = CODANO(output_variable_codimension=1, hidden_variable_codimension=2, lifting_channels=4,
                   use_positional_encoding=True, positional_encoding_dim=4, positional_encoding_modes=[4, 4],
                   use_horizontal_skip_connection=False, static_channel_dim=0, variable_ids=["u", "v"],
                   n_layers=layers, n_heads=[1] * layers, n_modes=[[4, 4]] * layers,
                   attention_scaling_factors=[0.5] * layers, per_layer_scaling_factors=[[1, 1]] * layers,
                   enable_cls_token=False)
    return model, (torch.randn(1, 2, 8, 8), None, ["u", "v"]), {}


def _fnogno() -> Built:
    """An FNO on a latent grid, then a graph neural operator out to query points."""
    from neuralop.models import FNOGNO

    model = FNOGNO(in_channels=3, out_channels=2, gno_radius=0.2, gno_coord_dim=2, fno_n_modes=(4, 4),
                   fno_hidden_channels=8, fno_n_layers=2, gno_use_open3d=False, gno_use_torch_scatter=False)
    return model, (torch.rand(12, 12, 2), torch.rand(20, 2), torch.randn(12, 12, 3)), {}


def _gino() -> Built:
    """Geometry-informed: graph operators from points to a latent grid and back, an FNO between."""
    from neuralop.models import GINO

    model = GINO(in_channels=3, out_channels=2, in_gno_radius=0.3, out_gno_radius=0.3, gno_use_torch_scatter=False,
                 gno_use_open3d=False, gno_coord_dim=2, in_gno_channel_mlp_hidden_layers=[8],
                 out_gno_channel_mlp_hidden_layers=[8], fno_n_modes=(4, 4), fno_hidden_channels=8, fno_n_layers=2,
                 projection_channel_ratio=2, fno_lifting_channel_ratio=2)
    grid = torch.stack(torch.meshgrid([torch.linspace(0, 1, 8)] * 2, indexing="xy")).permute(1, 2, 0)
    return model, (), {"x": torch.randn(1, 30, 3), "input_geom": torch.rand(30, 2), "latent_queries": grid,
                       "output_queries": torch.rand(20, 2)}


def _operator_loss(name: str, **options: Any) -> Built:
    """The relative Lp / Sobolev H1 losses (plain callables, not modules) between two fields."""
    from neuralop import losses

    return getattr(losses, name)(**options), (torch.randn(2, 1, 16, 16), torch.randn(2, 1, 16, 16)), {}


NEURALOP = [
    Spec("fno_1d", partial(_fno, 1, size=32)),
    Spec("fno_padded_gated", partial(_fno, domain_padding=0.25, channel_mlp_skip="soft-gating", fno_skip="identity",
                                     norm="group_norm", stabilizer="tanh", preactivation=True)),
    Spec("fno_complex", partial(_fno, 1, size=32, complex_data=True)),
    Spec("tfno_tucker", partial(_fno, tucker=True, factorization="tucker", rank=0.5)),
    Spec("fno_cp_factorized", partial(_fno, factorization="cp", rank=0.5, implementation="factorized")),
    Spec("uno", _uno),
    Spec("uqno", _uqno),
    Spec("codano", _codano),
    Spec("fnogno", _fnogno),
    Spec("gino", _gino),
    Spec("lp_loss", partial(_operator_loss, "LpLoss", d=2, p=2)),
    Spec("h1_loss", partial(_operator_loss, "H1Loss", d=2)),
]


# geomloss (its `tensorized` PyTorch routines and the new `geomloss.ot` solvers: the `online` and
# `multiscale` backends and the grid routines need pykeops, not installed) ------------------------

def _samples_loss(loss: str = "sinkhorn", weighted: bool = False, grad: bool = False, **options: Any) -> Built:
    from geomloss import SamplesLoss

    backend = options.pop("backend", "tensorized")
    samples_loss = SamplesLoss(loss, backend=backend, **options)
    if weighted:  # batched, with explicit weights: (α, x, β, y)
        return (samples_loss, (torch.rand(2, 30).softmax(-1), torch.randn(2, 30, 3), torch.rand(2, 40).softmax(-1),
                               torch.randn(2, 40, 3)), {})
    x = torch.randn(30, 3).requires_grad_(grad)  # a point cloud a model moves, as in a registration loss
    return samples_loss, (x, torch.randn(40, 3)), {}


def _ot_solve(kind: str, result: str = "value", **options: Any) -> Built:
    from geomloss import ot

    if kind == "sample":
        def solve(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return getattr(ot.solve_sample(x, y, blur=0.1, max_iter=10, **options), result)

        return solve, (torch.randn(30, 3), torch.randn(40, 3)), {}
    solver = ot.solve if kind == "matrix" else ot.solve_batch

    def solve_cost(cost: torch.Tensor) -> torch.Tensor:
        return getattr(solver(cost, reg=0.1, max_iter=10, **options), result)

    return solve_cost, (torch.rand(30, 40) if kind == "matrix" else torch.rand(2, 30, 40),), {}


GEOMLOSS = [
    Spec("sinkhorn", partial(_samples_loss, grad=True), train=True),
    Spec("sinkhorn_p1", partial(_samples_loss, p=1, blur=0.05)),
    Spec("sinkhorn_unbalanced", partial(_samples_loss, blur=0.05, reach=0.5, grad=True), train=True),
    Spec("sinkhorn_weighted_batched", partial(_samples_loss, weighted=True, blur=0.1, scaling=0.7)),
    Spec("sinkhorn_potentials", partial(_samples_loss, blur=0.1, potentials=True)),
    Spec("sinkhorn_auto_backend", partial(_samples_loss, backend="auto")),
    Spec("energy", partial(_samples_loss, "energy")),
    Spec("ot_solve_sample", partial(_ot_solve, "sample")),
    Spec("ot_solve_sample_debiased_unbalanced", partial(_ot_solve, "sample", debias=True, reach=1.0)),
    Spec("ot_solve_sample_plan", partial(_ot_solve, "sample", "plan")),
    Spec("ot_solve_matrix", partial(_ot_solve, "matrix")),
    Spec("ot_solve_batch", partial(_ot_solve, "batch")),
]


# siren-pytorch -----------------------------------------------------------------------------------

def _siren_coordinates(points: int = 64) -> torch.Tensor:
    return torch.rand(points, 2) * 2 - 1


def _siren(kind: str, **options: Any) -> Built:
    from siren_pytorch import Sine, Siren, SirenNet

    if kind == "sine":
        return Sine(w0=30.0), (torch.randn(4, 16),), {}
    if kind == "layer":
        return Siren(dim_in=2, dim_out=16, is_first=True, w0=30.0, **options), (_siren_coordinates(),), {}
    return SirenNet(dim_in=2, dim_hidden=32, dim_out=3, num_layers=3, **options), (_siren_coordinates(),), {}


def _siren_wrapper(loss: bool = False, latent: bool = False, **options: Any) -> Built:
    """An implicit image: the net evaluated on the wrapper's coordinate grid (vs an image, or modulated)."""
    from siren_pytorch import SirenNet, SirenWrapper

    net = SirenNet(dim_in=2, dim_hidden=32, dim_out=3, num_layers=3, **options)
    wrapper = SirenWrapper(net, image_width=8, image_height=6, latent_dim=8 if latent else None)
    if latent:
        return wrapper, (), {"latent": torch.randn(8)}
    return wrapper, ((torch.rand(1, 3, 6, 8),) if loss else ()), {}


SIREN = [
    Spec("sine", partial(_siren, "sine")),
    Spec("siren_layer", partial(_siren, "layer")),
    Spec("siren_layer_no_bias_dropout", partial(_siren, "layer", use_bias=False, dropout=0.1), train=True),
    Spec("siren_net", partial(_siren, "net")),
    Spec("siren_net_final_activation", partial(_siren, "net", final_activation=torch.nn.Sigmoid(), w0_initial=20.0)),
    Spec("siren_wrapper", _siren_wrapper),
    Spec("siren_wrapper_loss", partial(_siren_wrapper, loss=True), train=True),
    Spec("siren_wrapper_latent", partial(_siren_wrapper, latent=True)),
]


# pytorch-tcn (imported as `pytorch_tcn`) ---------------------------------------------------------

def _tcn(length: int = 32, batch: int = 2, embeddings: bool = False, stream: bool = False, **options: Any) -> Built:
    """A temporal convolutional network over a series, (batch, channels, time) or (batch, time, channels);
    streaming inference (batch 1) takes one block at a time, carrying the causal padding in its buffers."""
    from pytorch_tcn import TCN

    if embeddings:  # one static and one time-varying conditioning input
        options["embedding_shapes"] = [(3,), (2, length)]
    model = TCN(num_inputs=4, num_channels=[8, 8, 16], kernel_size=3, **options)
    x = torch.randn(batch, length, 4) if options.get("input_shape") == "NLC" else torch.randn(batch, 4, length)
    kwargs: dict[str, Any] = {"inference": True} if stream else {}
    if embeddings:
        kwargs["embeddings"] = [torch.randn(batch, 3), torch.randn(batch, 2, length)]
    return model, (x,), kwargs


def _temporal_conv(transpose: bool = False, stream: bool = False, **options: Any) -> Built:
    """The library's causal (or centred) 1-D convolution and transposed convolution layers alone."""
    from pytorch_tcn import TemporalConv1d, TemporalConvTranspose1d

    if transpose:
        stride = options.pop("stride", 2)
        layer = TemporalConvTranspose1d(8, 4, kernel_size=2 * stride, stride=stride, **options)
        return layer, (torch.randn(1 if stream else 2, 8, 16),), ({"inference": True} if stream else {})
    layer = TemporalConv1d(4, 8, kernel_size=3, dilation=2, **options)
    return layer, (torch.randn(1 if stream else 2, 4, 16),), ({"inference": True} if stream else {})


def _temporal_conv_buffer_io() -> Built:
    """Streaming with the padding state held outside the layer, as for an exported model: the state in,
    the output and the next state out, through the library's BufferIO."""
    from pytorch_tcn import TemporalConv1d
    from pytorch_tcn.buffer import BufferIO

    layer = TemporalConv1d(4, 8, kernel_size=3, dilation=2)

    def stream(x: torch.Tensor, state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        buffer_io = BufferIO(in_buffers=[state])
        y = layer(x, inference=True, buffer_io=buffer_io)
        return y, buffer_io.out_buffers[0]

    return stream, (torch.randn(1, 4, 16), torch.zeros(1, 4, 4)), {}


PYTORCH_TCN = [
    Spec("tcn", _tcn),
    Spec("tcn_train", _tcn, train=True),
    Spec("tcn_noncausal_batch_norm_skip", partial(_tcn, causal=False, use_norm="batch_norm", use_skip_connections=True,
                                                  input_shape="NLC", output_projection=2, output_activation="sigmoid")),
    Spec("tcn_gated_layer_norm", partial(_tcn, use_gate=True, use_norm="layer_norm", activation="gelu",
                                         kernel_initializer="normal", dilation_reset=2)),
    Spec("tcn_embeddings_concat", partial(_tcn, embeddings=True, embedding_mode="concat")),
    Spec("tcn_module_activation", partial(_tcn, activation=torch.nn.SiLU, use_norm=None,
                                          kernel_initializer="kaiming_uniform", dilations=[1, 2, 4])),
    Spec("tcn_streaming", partial(_tcn, length=8, batch=1, stream=True)),
    Spec("temporal_conv1d_centred_reflect", partial(_temporal_conv, causal=False, padding_mode="reflect")),
    Spec("temporal_conv1d_streaming", partial(_temporal_conv, stream=True)),
    Spec("temporal_conv1d_streaming_buffer_io", _temporal_conv_buffer_io),
    Spec("temporal_conv_transpose1d", partial(_temporal_conv, transpose=True)),
    Spec("temporal_conv_transpose1d_centred_odd", partial(_temporal_conv, transpose=True, causal=False, stride=3)),
]


# egnn-pytorch (E(n)-equivariant graph networks; dense, and on torch-geometric's message passing) -

def _egnn(nodes: int = 8, masked: bool = False, edges: int = 0, adjacency: bool = False, **options: Any) -> Built:
    """One E(n)-equivariant layer over node features and 3-D coordinates: (features, coordinates) out."""
    from egnn_pytorch import EGNN

    model = EGNN(dim=16, edge_dim=edges, m_dim=8, **options)
    kwargs: dict[str, Any] = {}
    if masked:
        kwargs["mask"] = torch.arange(nodes).expand(2, nodes) < torch.tensor([[nodes], [nodes - 2]])
    if edges:
        kwargs["edges"] = torch.randn(2, nodes, nodes, edges)
    if adjacency:  # a chain graph
        kwargs["adj_mat"] = (torch.arange(nodes)[:, None] - torch.arange(nodes)[None, :]).abs() == 1
    return model, (torch.randn(2, nodes, 16), torch.randn(2, nodes, 3)), kwargs


def _egnn_network(nodes: int = 8, masked: bool = False, adjacency: bool = False, edge_tokens: bool = False,
                  **options: Any) -> Built:
    """A stack of EGNN layers over atom tokens (optionally with bond tokens, n-degree adjacency and global
    attention tokens), as in molecule models."""
    from egnn_pytorch import EGNN_Network

    if edge_tokens:
        options.update(num_edge_tokens=4, edge_dim=4)
    model = EGNN_Network(depth=2, dim=16, num_tokens=10, m_dim=8, **options)
    kwargs: dict[str, Any] = {}
    if masked:
        kwargs["mask"] = torch.arange(nodes).expand(2, nodes) < torch.tensor([[nodes], [nodes - 3]])
    if adjacency:
        kwargs["adj_mat"] = (torch.arange(nodes)[:, None] - torch.arange(nodes)[None, :]).abs() == 1
    if edge_tokens:
        kwargs["edges"] = torch.randint(0, 4, (2, nodes, nodes))
    return model, (torch.randint(0, 10, (2, nodes)), torch.randn(2, nodes, 3)), kwargs


def _egnn_sparse(network: bool = False, **options: Any) -> Built:
    """The message-passing version over an edge list: rows of (x, y, z, features), two graphs in a batch."""
    from egnn_pytorch import EGNN_Sparse, EGNN_Sparse_Network

    nodes = 10
    edge_index = torch.randint(0, nodes, (2, 30))
    batch = torch.tensor([0] * 6 + [1] * 4)
    if network:  # the last feature column is an atom type, embedded by the network
        model = EGNN_Sparse_Network(n_layers=2, feats_dim=9, m_dim=8, embedding_nums=[5], embedding_dims=[4],
                                    edge_attr_dim=2, **options)
        x = torch.cat([torch.randn(nodes, 3 + 8), torch.randint(0, 5, (nodes, 1)).float()], dim=-1)
        return model, (x, edge_index, batch, torch.randn(30, 2)), {}
    model = EGNN_Sparse(feats_dim=8, m_dim=8, **options)
    return model, (torch.randn(nodes, 3 + 8), edge_index), {"batch": batch}


EGNN = [
    Spec("egnn", _egnn),
    Spec("egnn_nearest_masked", partial(_egnn, masked=True, num_nearest_neighbors=4, fourier_features=2,
                                        norm_coors=True, soft_edges=True, m_pool_method="mean",
                                        coor_weights_clamp_value=2.0)),
    Spec("egnn_edges_train", partial(_egnn, edges=4, dropout=0.1, norm_feats=True), train=True),
    Spec("egnn_sparse_neighbors", partial(_egnn, adjacency=True, only_sparse_neighbors=True)),
    Spec("egnn_coordinates_only", partial(_egnn, update_feats=False, valid_radius=2.0, num_nearest_neighbors=3)),
    Spec("egnn_network", partial(_egnn_network, num_positions=16)),
    Spec("egnn_network_adjacency_degrees", partial(_egnn_network, adjacency=True, edge_tokens=True, num_adj_degrees=3,
                                                   adj_dim=4)),
    Spec("egnn_network_global_attention", partial(_egnn_network, masked=True, global_linear_attn_every=1,
                                                  global_linear_attn_heads=2, global_linear_attn_dim_head=8,
                                                  num_global_tokens=2)),
    Spec("egnn_sparse", partial(_egnn_sparse, fourier_features=2, soft_edge=1, norm_feats=True)),
    Spec("egnn_sparse_network", partial(_egnn_sparse, network=True)),
]


# stable-baselines3 (policies built from gymnasium spaces; PPO/A2C training evaluates actions, SAC and TD3
# train through their actor's and critic's own methods) -------------------------------------------

def _sb3_space(kind: str) -> Any:
    import numpy as np
    from gymnasium import spaces

    return {"vector": spaces.Box(-1.0, 1.0, (8,), np.float32),
            "image": spaces.Box(0, 255, (3, 36, 36), np.uint8),  # NatureCNN's smallest input
            "dict": spaces.Dict({"image": spaces.Box(0, 255, (3, 36, 36), np.uint8),
                                 "state": spaces.Box(-1.0, 1.0, (5,), np.float32)}),
            "discrete": spaces.Discrete(4),
            "box": spaces.Box(-2.0, 2.0, (2,), np.float32),
            "multi_discrete": spaces.MultiDiscrete([3, 4]),
            "multi_binary": spaces.MultiBinary(3)}[kind]


def _sb3_observation(kind: str, batch: int = 4) -> Any:
    if kind == "vector":
        return torch.rand(batch, 8) * 2 - 1
    if kind == "image":
        return torch.randint(0, 256, (batch, 3, 36, 36), dtype=torch.uint8)  # as the buffers store images
    return {"image": _sb3_observation("image", batch), "state": torch.rand(batch, 5) * 2 - 1}


def _sb3_actions(kind: str, batch: int = 4) -> torch.Tensor:
    return {"discrete": lambda: torch.randint(0, 4, (batch,)).float(),
            "box": lambda: torch.rand(batch, 2) * 4 - 2,
            "multi_discrete": lambda: torch.stack([torch.randint(0, 3, (batch,)), torch.randint(0, 4, (batch,))], 1),
            "multi_binary": lambda: torch.randint(0, 2, (batch, 3)).float()}[kind]()


def _actor_critic(observation: str = "vector", action: str = "discrete", evaluate: bool = False,
                  **options: Any) -> Built:
    """A PPO/A2C actor-critic policy: sampled actions, values and log-probabilities (forward), or what the
    training loss evaluates (`evaluate_actions`)."""
    from stable_baselines3.common.policies import ActorCriticCnnPolicy, ActorCriticPolicy, MultiInputActorCriticPolicy

    policy_class = {"vector": ActorCriticPolicy, "image": ActorCriticCnnPolicy,
                    "dict": MultiInputActorCriticPolicy}[observation]
    policy = policy_class(_sb3_space(observation), _sb3_space(action), lambda _: 3e-4, net_arch=[16, 16], **options)
    if not evaluate:
        return policy, (_sb3_observation(observation),), {}
    policy.set_training_mode(True)
    obs = _sb3_observation(observation)
    return policy.evaluate_actions, (obs, _sb3_actions(action)), {}


def _dqn(**options: Any) -> Built:
    """DQN's greedy action from its Q-network."""
    from stable_baselines3.dqn.policies import DQNPolicy

    return DQNPolicy(_sb3_space("vector"), _sb3_space("discrete"), lambda _: 1e-4, net_arch=[16, 16],
                     **options), (_sb3_observation("vector"),), {}


def _off_policy(algorithm: str, part: str = "policy", **options: Any) -> Built:
    """SAC's or TD3's policy (its actor's action), or the parts their training steps call: SAC's squashed
    Gaussian `action_log_prob`, TD3's critic `q1_forward`."""
    from stable_baselines3.sac.policies import SACPolicy
    from stable_baselines3.td3.policies import TD3Policy

    policy = {"sac": SACPolicy, "td3": TD3Policy}[algorithm](_sb3_space("vector"), _sb3_space("box"),
                                                            lambda _: 3e-4, net_arch=[16, 16], **options)
    obs = _sb3_observation("vector")
    if part == "policy":
        return policy, (obs,), {}
    policy.set_training_mode(True)
    if part == "action_log_prob":
        return policy.actor.action_log_prob, (obs,), {}
    return policy.critic.q1_forward, (obs, _sb3_actions("box")), {}


STABLE_BASELINES3 = [
    Spec("ppo_mlp_discrete", _actor_critic),
    Spec("ppo_mlp_gaussian", partial(_actor_critic, action="box", activation_fn=torch.nn.ReLU)),
    Spec("ppo_mlp_sde", partial(_actor_critic, action="box", use_sde=True, squash_output=True)),
    Spec("ppo_cnn", partial(_actor_critic, "image")),
    Spec("ppo_multi_input", partial(_actor_critic, "dict", "multi_discrete")),
    Spec("ppo_evaluate_actions_multi_discrete", partial(_actor_critic, action="multi_discrete",
                                                        evaluate=True, share_features_extractor=False),
         train=True),
    Spec("a2c_evaluate_actions_multi_binary", partial(_actor_critic, action="multi_binary",
                                                      evaluate=True), train=True),
    Spec("dqn", _dqn),
    Spec("sac", partial(_off_policy, "sac")),
    Spec("sac_action_log_prob", partial(_off_policy, "sac", "action_log_prob"), train=True),
    Spec("td3", partial(_off_policy, "td3")),
    Spec("td3_q1_forward", partial(_off_policy, "td3", "q1_forward"), train=True),
]


MODELS: dict[str, list[Spec]] = {
    "transformers": TRANSFORMERS,
    "diffusers": DIFFUSERS,
    "kornia": KORNIA,
    "x-transformers": X_TRANSFORMERS,
    "vector-quantize-pytorch": VECTOR_QUANTIZE,
    "torch-geometric": TORCH_GEOMETRIC,
    "monai": MONAI,
    "torchdiffeq": TORCHDIFFEQ,
    "pytorch-metric-learning": METRIC_LEARNING,
    "zuko": ZUKO,
    "torchsde": TORCHSDE,
    "nflows": NFLOWS,
    "torchmetrics": TORCHMETRICS,
    "gpytorch": GPYTORCH,
    "e3nn": E3NN,
    "fair-esm": FAIR_ESM,
    "pyro-ppl": PYRO,
    "peft": PEFT,
    "reformer-pytorch": REFORMER,
    "snntorch": SNNTORCH,
    "pytorch-tabnet": TABNET,
    "entmax": ENTMAX,
    "mambapy": MAMBAPY,
    "torchcde": TORCHCDE,
    "normflows": NORMFLOWS,
    "torchode": TORCHODE,
    "geoopt": GEOOPT,
    "local-attention": LOCAL_ATTENTION,
    "perceiver-pytorch": PERCEIVER,
    "pytorch-optimizer": PYTORCH_OPTIMIZER,
    "schedulefree": SCHEDULEFREE,
    "st-moe-pytorch": ST_MOE,
    "botorch": BOTORCH,
    "performer-pytorch": PERFORMER,
    "rotary-embedding-torch": ROTARY,
    "mixture-of-experts": MIXTURE_OF_EXPERTS,
    "linear-attention-transformer": LINEAR_ATTENTION,
    "hyper-connections": HYPER_CONNECTIONS,
    "routing-transformer": ROUTING_TRANSFORMER,
    "torchkbnufft": TORCHKBNUFFT,
    "freia": FREIA,
    "tab-transformer-pytorch": TAB_TRANSFORMER,
    "deepxde": DEEPXDE,
    "auraloss": AURALOSS,
    "julius": JULIUS,
    "ncps": NCPS,
    "conformer": CONFORMER,
    "pytorch-msssim": MSSSIM,
    "timm": TIMM,
    "vit-pytorch": VIT_PYTORCH,
    "segmentation-models-pytorch": SMP,
    "nnAudio": NNAUDIO,
    "kymatio": KYMATIO,
    "flow_matching": FLOW_MATCHING,
    "neuraloperator": NEURALOP,
    "geomloss": GEOMLOSS,
    "siren-pytorch": SIREN,
    "pytorch-tcn": PYTORCH_TCN,
    "egnn-pytorch": EGNN,
    "stable-baselines3": STABLE_BASELINES3,
}
