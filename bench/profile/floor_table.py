"""The table the floor probes (pool_decode_floor.py, fp8_decode_floor.py)
print: each time in µs with its ratio to the copy of the same bytes, and
the markdown written to --out."""
from pathlib import Path


def over_copy(t, cols):
    """A cell a column: 'µs (time / copy)', or '—' where the call failed."""
    return [f"{t[c]:.2f} ({t[c] / t['copy']:.2f})" if t[c] else "—" for c in cols]


def emit(lines, out, name):
    """Prints the table and, with `out` (a directory), writes it there as `name`."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / name).write_text(text)
