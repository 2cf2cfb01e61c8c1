"""Keyword options -> the command line's flags (include/daedalus/run.hpp).

Every option of the problem executables is a keyword: `t_end=2.0` is
`--t-end 2.0`, `sens=["k", "c"]` is `--sens k,c`, `params={"k": 2}` is
`--param k=2`, `q0={"x": 0.6}` is `--q0 x=0.6` (`v0=` likewise),
`sens_dq=True` is `--sens-dq`. The command line's own parser then reads
them, so the names, defaults and checks are those of the
executables (daedalus.usage(problem) lists them).
"""
import math
import numbers

# Flags that take no value: True adds them, False leaves them out.
_BOOL_FLAGS = {"sens_dq", "sens_staggered", "sens_no_error_control",
               "error_estimate"}
# Options that are not flags of a run.
_NOT_RUN_OPTIONS = {"help", "quiet", "emit_kernels"}


def _number(key, value):
    try:
        x = float(value)
    except OverflowError:
        # An int beyond double range (10**400) raised OverflowError, not
        # the ValueError promised (found by tests/robustness/fuzz_edges.py).
        raise ValueError(f"option {key}: the whole number of "
                         f"{len(str(value))} digits is beyond the range of a "
                         "double (about 1.8e308)") from None
    if not math.isfinite(x):
        raise ValueError(f"option {key}: {value!r} is not a finite number")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return repr(x)  # shortest text that reads back to the same double


def _is_names(value):
    return isinstance(value, (list, tuple)) and all(
        isinstance(v, str) for v in value)


def to_args(options):
    """The command-line arguments for a dict of keyword options.

    Raises TypeError for a value of the wrong type and ValueError for a
    non-finite number; the parser itself rejects unknown options."""
    args = []
    for key, value in options.items():
        if not isinstance(key, str):
            raise TypeError(f"option names are strings, not {key!r}")
        if key in _NOT_RUN_OPTIONS:
            raise TypeError(f"'{key}' is an option of the executables, not "
                            "of daedalus.run")
        flag = "--" + key.replace("_", "-")
        if key == "params":
            if not isinstance(value, dict):
                raise TypeError("params must be a dict {name: value}, not "
                                f"{type(value).__name__}")
            for name, x in value.items():
                if not isinstance(name, str):
                    raise TypeError(f"params: names are strings, not "
                                    f"{name!r}")
                if isinstance(x, bool) or not isinstance(x, numbers.Real):
                    raise TypeError(f"params['{name}'] must be a number, "
                                    f"not {type(x).__name__}")
                args.append(f"--param={name}={_number(name, x)}")
        elif key in ("q0", "v0"):
            # q0={"x": 0.6}: --q0 x=0.6 (the start is then made consistent
            # with the constraints, as on the command line).
            if not isinstance(value, dict):
                raise TypeError(f"{key} must be a dict {{coordinate: value}}, "
                                f"not {type(value).__name__}")
            for name, x in value.items():
                if not isinstance(name, str):
                    raise TypeError(f"{key}: coordinate names are strings, "
                                    f"not {name!r}")
                if isinstance(x, bool) or not isinstance(x, numbers.Real):
                    raise TypeError(f"{key}['{name}'] must be a number, not "
                                    f"{type(x).__name__}")
                args.append(f"--{key}={name}={_number(name, x)}")
        elif key in ("counterfactual", "counterfactuals"):
            specs = [value] if isinstance(value, str) else value
            if not _is_names(specs):
                raise TypeError(f"{key} must be a string or a list of "
                                "strings (the --counterfactual SPEC)")
            args += [f"--counterfactual={s}" for s in specs]
        elif key in _BOOL_FLAGS:
            if not isinstance(value, bool):
                raise TypeError(f"option {key} is True or False, not "
                                f"{value!r}")
            if value:
                args.append(flag)
        elif isinstance(value, bool):
            raise TypeError(f"option {key} takes a value, not {value!r}")
        elif isinstance(value, numbers.Real):
            args.append(f"{flag}={_number(key, value)}")
        elif isinstance(value, str):
            args.append(f"{flag}={value}")
        elif _is_names(value):
            args.append(f"{flag}={','.join(value)}")
        else:
            raise TypeError(f"option {key}: {type(value).__name__} is not a "
                            "number, a string or a list of names")
    return args
