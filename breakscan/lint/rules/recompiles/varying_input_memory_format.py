from breakscan.lint.rule import DeclaredCallsRule, Example


class VaryingInputMemoryFormat(DeclaredCallsRule):
    id = "BR020"
    name = "varying-input-memory-format"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    call_sites_table = "varying_layouts"
    message = ("the declared calls give this compiled code a tensor in one memory format on some calls and in "
               "another on others: TorchDynamo guards on each input's strides, so the other layout recompiles it")
    fix_hint = ("convert inputs to one memory format before the call (`x.contiguous(memory_format=torch.channels_last)` "
                "every time), or expect one compile per layout (both stay cached)")
    docs = """
    ## What it does
    Flags a compiled function, or the `forward` of a compiled module, that the calls
    `BREAKSCAN_TARGETS` declares give a tensor in other memory formats, as written
    (`torch.randn(2, 3, 16, 16)`, then `torch.randn(2, 3, 16, 16).contiguous(memory_format=
    torch.channels_last)` or `.to(memory_format=...)`, or `.permute(...)` / `.transpose(...)`
    of one; read, never run, through the module's own helpers that return one). Reported at the
    function, where TorchDynamo reports a recompile for an input's strides.

    ## Why is this bad?
    TorchDynamo 2.13 guards on the strides of every tensor input (`tensor 'x' stride mismatch
    at index 1`): a network fed NCHW batches, then channels-last ones (a data loader that
    converts some of them, a benchmark that tries both), compiles twice. Both graphs stay cached,
    so it is one extra compile per layout (a warning).

    ## Example
    ```python
    model = torch.compile(ConvNet().eval())
    model(images)                                                  # contiguous
    model(images.contiguous(memory_format=torch.channels_last))    # recompiles
    ```

    ## Use instead
    Convert every input to one memory format before calling the compiled code.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Stem(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 8, 3, padding=1)

                def forward(self, x):  # recompile
                    return self.conv(x).relu().mean((-2, -1))

            BREAKSCAN_TARGETS = {"Stem().eval()": "[torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8).contiguous(memory_format=torch.channels_last)]"}
        """, entry="Stem().eval()",
            inputs="[torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8).contiguous(memory_format=torch.channels_last)]"),
        Example("""
            import torch
            from torch import nn

            class Tubelets(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 4)

                def forward(self, clip):  # recompile
                    return self.proj(clip).mean(1)

            def channels_first_clip():
                return torch.randn(1, 3, 4, 8).permute(0, 2, 1, 3)

            BREAKSCAN_TARGETS = {"Tubelets()": "[torch.randn(1, 4, 3, 8), channels_first_clip()]"}
        """, entry="Tubelets()", inputs="[torch.randn(1, 4, 3, 8), channels_first_clip()]"),
        Example("""
            import torch
            from torch import nn

            def tile(channels_last: bool = False):
                x = torch.rand(2, 3, 8, 8)
                return x.contiguous(memory_format=torch.channels_last) if channels_last else x

            class PatchHead(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.patches = nn.Conv2d(3, 4, 4, stride=4)

                def forward(self, tiles):  # recompile
                    return self.patches(tiles).flatten(2).sigmoid()

            BREAKSCAN_TARGETS = {"PatchHead().eval()": "[tile(), tile(channels_last=True)]"}
        """, entry="PatchHead().eval()", inputs="[tile(), tile(channels_last=True)]"),
        Example("""
            import torch

            def project(rays, weight):  # recompile
                return rays @ weight

            _weight = torch.randn(3, 4)
            _rays = torch.randn(16, 3)
            _rays_t = torch.randn(3, 16).t()

            BREAKSCAN_TARGETS = {"project": "[(_rays, _weight), (_rays_t, _weight)]"}
        """, entry="project", inputs="[(_rays, _weight), (_rays_t, _weight)]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Stem(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 8, 3, padding=1)

                def forward(self, x):
                    return self.conv(x).relu().mean((-2, -1))

            BREAKSCAN_TARGETS = {"Stem().eval()": "[torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last), torch.randn(2, 3, 8, 8).contiguous(memory_format=torch.channels_last)]"}
        """, entry="Stem().eval()",
            inputs="[torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last), "
                   "torch.randn(2, 3, 8, 8).contiguous(memory_format=torch.channels_last)]"),
        Example("""
            import torch
            from torch import nn

            class Tubelets(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 4)

                def forward(self, clip):
                    return self.proj(clip).mean(1)

            BREAKSCAN_TARGETS = {"Tubelets()": "[torch.randn(1, 4, 3, 8), torch.randn(1, 3, 4, 8).transpose(1, 2).contiguous()]"}
        """, entry="Tubelets()", inputs="[torch.randn(1, 4, 3, 8), torch.randn(1, 3, 4, 8).transpose(1, 2).contiguous()]"),
    )
