"""The converters: one module per construct, each a tree transformer whose
docstring shows a before/after pair. `autograph.conversion` runs them on
one function at a time (its nested functions first), in this order:

  Lowering, on the original tree (`conversion.LOWERING`):
    directives             `set_loop_options(...)` in a loop becomes options of that loop
    return_statements      `return` anywhere becomes a flag and a value (`do_return`, `retval`)
    break_statements       `break` becomes a flag; a loop's `else` a guarded block
    continue_statements    `continue` becomes structure or a flag

  Expressions, after `analysis.Scope` is computed (`conversion.EXPRESSIONS`):
    asserts                `assert` becomes `ag__.assert_stmt`
    call_trees             calls go through `ag__.call(f)`
    item_updates           `x[i] = v` becomes `x = ag__.setitem(x, i, v)`
    item_reads             `x[i]` whose index a backend may trace becomes `ag__.getitem(x, i, 'x')`
    conditional_expressions  `a if c else b` becomes `ag__.if_exp`
    logical_expressions    `and`, `or`, `not`, chained comparisons become operator calls

  Statements: control_flow  `if`, `while`, `for` become `ag__.if_stmt`, `while_stmt`,
                            `for_stmt` with body functions and explicit state
  What runs: fast_paths     inlines each operator's Python meaning behind a
                            check that the deciding value is a Python value
                            (on a copy: `to_code` shows the tree before it)

`static_ranges` tells fast_paths which `for` loops over a range only compute
(a backend that traces may stage those as one loop); `jumps` holds what the
three jump lowerings share; `base` the transformer
base of the tree-walking passes (nested functions and classes left to
their own conversion, `transform(node, ctx)` over the function's body).

Annotations that passes leave on nodes for later ones (plain attributes,
read with `getattr(node, name, default)`):

  loop.loop_options     directives: the keywords of `set_loop_options` in that
                        loop, passed to the loop's operator by control_flow
  loop.stop_flags       return_statements and break_statements: the flags that
                        end the loop early; control_flow and analysis treat
                        them as loop state and as the loop's extra test
  assign.original       item_updates: the `x[i] = v` statement a `setitem`
                        call replaced; control_flow puts it back where `x`
                        may be unbound, so that Python's error is raised
"""
