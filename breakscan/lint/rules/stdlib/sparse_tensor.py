import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.reads import FirstReads

# torch functions whose first argument is a sparse tensor (`torch.sparse.mm(adj, x)`).
_SPARSE_OPERAND = frozenset({"torch.sparse.mm", "torch.sparse.sum", "torch.sparse.softmax",
                             "torch.sparse.log_softmax"})


class SparseTensor(Rule):
    id = "BS512"
    name = "sparse-tensor"
    gb_ids = ("GB0015",)
    message = ("a sparse tensor is read here: TorchDynamo 2.13 cannot wrap one, so the graph breaks here and the "
               "rest of the function runs eagerly")
    skips_frame = True
    fix_hint = ("keep sparse tensors out of compiled code: run the sparse product outside it, or store the matrix "
                "dense (`.to_dense()`) when it is small")
    docs = """
    ## What it does
    Flags the first read, in each function that runs under `torch.compile`, of a sparse tensor
    (passing it on to a helper reads it): one made by `.to_sparse()` (and the
    `to_sparse_csr/csc/bsr/bsc` forms) or `torch.sparse_coo_tensor` (and the other sparse
    constructors, and what `.coalesce()`, `.clone()`, `.to()`... of one give), a buffer or
    attribute `__init__` sets to one, or one the calls `BREAKSCAN_TARGETS` declares pass; and a
    method called on one as it is made (`torch.sparse_coo_tensor(i, v, size).coalesce()`: the code
    resumed after making it reads it at once). The rest of that function runs eagerly, so later
    constructs in it are not reported. As a warning, a parameter of the compiled function
    that it gives first to `torch.sparse.mm` (`torch.sparse.sum`, `torch.sparse.softmax`...), which takes
    sparse tensors: the analysis cannot tell whether the caller passes a sparse one.

    ## Why is this bad?
    TorchDynamo 2.13 cannot wrap a sparse tensor in its graph (GB0015 "Attempted to wrap sparse
    Tensor"): the graph breaks where the frame first reads it, and that frame then runs eagerly.
    Making one in compiled code breaks too (GB0277, reported by untraceable-torch-call), and the
    frame that goes on after that break breaks again where it reads the result.

    ## Example
    ```python
    def forward(self, x):
        return torch.sparse.mm(self.adj, self.lin(x))   # self.adj = adj.to_sparse() in __init__
    ```

    ## Use instead
    ```python
    def forward(self, x):
        return self.adj_dense @ self.lin(x)   # a dense matrix (small graphs), traced
    ```
    or compile the layers around the sparse product and call it between them, uncompiled.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class GraphConv(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("adj", (torch.eye(4) + torch.ones(4, 4)).to_sparse())
                    self.lin = nn.Linear(8, 8)

                def forward(self, x):
                    h = self.lin(x)
                    return torch.sparse.mm(self.adj, h)  # break
        """, entry="GraphConv()", inputs="torch.randn(4, 8)"),
        Example("""
            import torch

            def propagate(x, adj):
                h = x * 2
                return torch.sparse.mm(adj, h).relu()  # break

            BREAKSCAN_TARGETS = {"propagate": "[(torch.randn(4, 8), torch.eye(4).to_sparse())]"}
        """, entry="propagate", inputs="(torch.randn(4, 8), torch.eye(4).to_sparse())"),
        Example("""
            import torch

            def normalized(adj):
                deg = adj.sum(1).pow(-0.5)
                return (deg[:, None] * adj * deg[None, :]).to_sparse()  # break (another rule)

            @torch.compile
            def propagate(x, adj):
                a = normalized(adj)
                return torch.sparse.mm(a, x) + x  # break
        """, entry="propagate", inputs="(torch.randn(4, 8), torch.ones(4, 4))"),
        Example("""
            import torch
            from torch import nn

            def adjacency(rows, cols, n):
                vals = torch.ones(rows.numel())
                return torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, (n, n)).coalesce()  # break

            class Propagate(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.emb = nn.Embedding(4, 8)

                def spread(self, adj):
                    return torch.sparse.mm(adj, self.emb.weight)  # break

                def forward(self, rows, cols):
                    adj = adjacency(rows, cols, 4)
                    return self.spread(adj).sum()  # break
        """, entry="Propagate()", inputs="(torch.tensor([0, 1, 2]), torch.tensor([1, 2, 3]))"),
        Example("""
            import torch

            @torch.compile
            def spectral(x, laplacian):
                # the caller passes a sparse tensor
                return torch.sparse.mm(laplacian, x) * 0.5  # break
        """, entry="spectral", inputs="(torch.randn(4, 8), torch.eye(4).to_sparse())"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class GraphConv(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("adj", torch.eye(4) + torch.ones(4, 4))
                    self.lin = nn.Linear(8, 8)

                def forward(self, x):
                    return self.adj @ self.lin(x)  # a dense matrix
        """, entry="GraphConv()", inputs="torch.randn(4, 8)"),
    )

    def __init__(self) -> None:
        self.reads = FirstReads()
        self.attributes: set[str] = set()
        self.used: set[str] = set()  # the names read so far that hold no sparse tensor

    def on_Call(self, node: cst.Call, ctx) -> None:
        self.reads.on_call(node)
        first = node.args[0].value if node.args and not node.args[0].star else None
        if (isinstance(first, cst.Name) and ctx.is_root and ctx.is_passed_in(first)
                and first.value not in self.used and not v.is_sparse(ctx.value(first))
                and ctx.qualname(node.func) in _SPARSE_OPERAND):
            ctx.report(self, first, f"`{first.value}` is given to `{ctx.code(node.func)}`, which takes a sparse "
                                    "tensor: if the caller passes one, TorchDynamo cannot wrap it, and the graph "
                                    "breaks here (the function then runs eagerly)", severity="warning")

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        self.reads.on_attribute(node)
        if v.is_sparse(ctx.value(node)) and ctx.code(node) not in self.attributes:
            self.attributes.add(ctx.code(node))
            ctx.report(self, node)
        elif isinstance(node.value, cst.Call) and v.is_sparse(ctx.value(node.value)):
            # `torch.sparse_coo_tensor(i, v, size).coalesce()`: the code resumed after making it
            # reads it at once
            ctx.report(self, node.value, "a sparse tensor made here is read at once (its method is called): "
                                         "TorchDynamo 2.13 cannot wrap one, so the graph breaks here and the rest "
                                         "of the function runs eagerly")

    def on_Name(self, node: cst.Name, ctx) -> None:
        if v.is_sparse(ctx.local_value(node.value)):  # a local or a parameter: no global is one
            if self.reads.first_read(node, ctx, passing_on_reads=True):
                ctx.report(self, node)
        elif not self.reads.is_label(node):
            self.used.add(node.value)  # for the guess above: a parameter used before its sparse call
