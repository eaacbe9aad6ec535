"""The GPU schedule a caller pins: the text of a ``#gdn.schedule<...>``
attribute, the one form every layer passes (the C API's
``gdnRecurrentDesc.schedule``, gdn-run's ``--schedule``, the pass option
``schedule``). Its parameters and their meanings are the attribute's
(docs/schedule.md); this module keeps no list of them, so a parameter added
to the attribute is accepted here as it is, and an unknown one is the
compiler's error (``gdn.Error`` naming it)."""
import operator
import re

_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")


def schedule_text(schedule):
    """The attribute text of `schedule`:

    - None or {}: "" (every parameter the cost model's);
    - a str: the text of a #gdn.schedule<...> attribute, passed as is;
    - a dict {parameter: value}: "#gdn.schedule<parameter = value, ...>",
      a value an int (a size, e.g. columns_per_lane=2) or a str (an enum
      case, e.g. reductions="in_turn").

    Raises TypeError naming the argument for another type, ValueError for a
    name or enum case that is not an identifier (so no text reaches past
    the attribute)."""
    if schedule is None:
        return ""
    if isinstance(schedule, str):
        return schedule
    if not isinstance(schedule, dict):
        raise TypeError("schedule must be None, the text of a #gdn.schedule<...> "
                        f"or a dict of its parameters, got {type(schedule).__name__}")
    items = []
    for name, value in schedule.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"schedule parameter name {name!r} is not an identifier")
        if isinstance(value, str):
            if not _NAME.match(value):
                raise ValueError(f"schedule parameter {name} = {value!r} is not an "
                                 "enum case (an identifier)")
        elif isinstance(value, bool):
            raise TypeError(f"schedule parameter {name} must be an int or an enum "
                            f"case, got {value!r}")
        else:
            try:
                value = operator.index(value)
            except TypeError:
                raise TypeError(f"schedule parameter {name} must be an int or an "
                                f"enum case, got {value!r}") from None
        items.append(f"{name} = {value}")
    return f"#gdn.schedule<{', '.join(items)}>" if items else ""
