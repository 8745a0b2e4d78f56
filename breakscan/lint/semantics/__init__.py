"""What the rules ask about code beyond an expression's kind: tensor data versus numbers that only
look like tensors, torch operators in their spellings, boolean masks, branches a normal run does
not take, receivers of tensor-only methods, the `random` module. Below the rules, above the walker's
value kinds; rules reach it through `ctx` or import it, never each other."""
