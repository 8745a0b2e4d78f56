import libcst as cst

from breakscan.lint.rule import Example, Rule

PACKING = frozenset({"torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pack_sequence"})


class PackSequence(Rule):
    id = "BS307"
    name = "pack-sequence"
    gb_ids = ("GB0007",)
    message = "packing variable-length sequences is skipped by TorchDynamo: the graph breaks here"
    fix_hint = "run the packing and the RNN outside the compiled region (@torch.compiler.disable), or use padded batches with a mask"
    docs = """
    ## What it does
    Flags `torch.nn.utils.rnn.pack_padded_sequence(...)` and `pack_sequence(...)` in compiled code.

    ## Why is this bad?
    A `PackedSequence` stores how many sequences are still active at each time step, a layout
    that depends on the lengths' values. TorchDynamo does not trace the packing functions (they
    are on its skip list): the graph ends at the call, packing runs eagerly and a new graph starts
    after it (GB0007 "Attempted to call function marked as skipped"). The `nn.RNN`/`nn.LSTM`/
    `nn.GRU` that usually consumes the packed batch is not traced either.

    ## Example
    ```python
    packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
    output, hidden = self.lstm(packed)
    ```

    ## Use instead
    ```python
    @torch.compiler.disable
    def run_rnn(self, embedded, lengths):
        packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
        output, hidden = self.lstm(packed)
        return pad_packed_sequence(output, batch_first=True)[0], hidden
    ```
    and compile the rest of the model; or feed the padded batch and mask the padding.
    """
    invalid = (
        Example("""
            import torch
            from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

            @torch.compile
            def fn(x):
                y = x.view(2, 4, 1) * 2
                packed = pack_padded_sequence(y, [3, 2], batch_first=True)  # break
                return pad_packed_sequence(packed, batch_first=True)[0] + 1
        """),
        Example("""
            import torch
            from torch import nn

            @torch.compile
            def fn(x):
                y = x * 2
                packed = nn.utils.rnn.pack_sequence([y[:3], y[:2]])  # break
                return packed.data + 1
        """),
    )
    valid = (
        Example("""
            import torch
            from torch.nn.utils.rnn import pad_sequence

            @torch.compile
            def fn(x):
                padded = pad_sequence([x[:3], x[:2]], batch_first=True)
                mask = torch.arange(3)[None, :] < torch.tensor([3, 2])[:, None]
                return padded * mask
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) in PACKING:
            ctx.report(self, node)
