"""Running one case under torch: build, poison, call, check."""
from .inputs import clone
from .model import Case, NotRaised, Result, Surprise, case_rng
from .poison import apply_poison
from .tolerance import check_headroom


def torch_error_text(e: BaseException) -> str:
    """`<ExceptionType>: <message>`, the message cut at its first line and
    before the dispatcher's explanation ("This could be because ..."), which
    lists every backend."""
    msg = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {msg.split(' This could be because')[0]}"


def numbered(cases):
    """(case, k) for each of a family's cases in order, k its place among
    the cases of its op: run_case's k, which picks its poison."""
    seen = {}
    for case in cases:
        seen[case.op] = seen.get(case.op, -1) + 1
        yield case, seen[case.op]


def run_case(case: Case, k: int) -> Result:
    """Runs `case`, the k-th case of its op in its family (picks the poison)."""
    if case.backward:
        from .grad import run_backward
        return run_backward(case, k, torch_error_text)
    inputs = case.build(case_rng(case.id))
    poison = "none"
    if case.poison:
        inputs, poison = apply_poison(inputs, case.op, k)
    res = Result(case, inputs, poison, rules=case.rules, tolerance=case.tolerance)
    try:
        res.outputs = case.run([clone(x) for x in inputs], case.kwargs)
    except Exception as e:  # noqa: BLE001 - any torch exception is data
        if case.error_class is None:
            raise Surprise(f"{case.id}: declared ok, torch raised {torch_error_text(e)}") from e
        res.torch_error = torch_error_text(e)
        res.tolerance = case.tolerance or "exact"  # no values to compare
        if case.error_match and case.error_match not in res.torch_error:
            raise Surprise(f"{case.id}: torch raised {res.torch_error!r}, expected "
                           f"{case.error_match!r} (the first check torch makes)") from e
        return res
    if case.error_class is not None:
        raise NotRaised(f"{case.id}: declared error {case.error_class}, torch did not raise")
    try:
        if case.check:
            case.check(inputs, res.outputs)
    except Surprise as e:
        raise Surprise(f"{case.id}: {e}") from e
    if case.tag_rules:
        res.rules = case.tag_rules(case.rules, res.outputs)
    if case.tolerance_of:
        res.tolerance = case.tolerance_of(res.outputs)
    check_headroom(case, inputs, res.outputs, res.tolerance)
    return res
