"""``model.summary()``: one row per layer with its output shape and parameter count."""

from __future__ import annotations

from typing import Any

from .input_layer import InputLayer
from .symbolic import format_shape

__all__ = ["format_bytes", "format_summary"]


def format_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} GB"  # pragma: no cover


def _shape_text(layer: Any) -> str:
    try:
        shapes = [n.outputs for n in layer._inbound_nodes]
    except AttributeError:
        return "?"
    if not shapes:
        return "?"
    outs = shapes[0]
    if len(outs) == 1:
        return format_shape(outs[0].shape)
    return format_shape([t.shape for t in outs])


def _is_chain(model: Any) -> bool:
    for layer in model.layers:
        for node in layer._inbound_nodes:
            if len(node.inputs) > 1:
                return False
    return len(model.inputs) == 1 and len(model.outputs) == 1


def format_summary(model: Any, line_length: int | None = None) -> str:
    model._require_graph()
    sequential = model._is_sequential
    connected = not sequential and not _is_chain(model)
    cols = ["Layer (type)", "Output Shape", "Param #"] + (["Connected to"] if connected else [])
    rows: list[list[str]] = []
    member = {id(n) for layer in model._executor.layers for n in layer._inbound_nodes}
    for layer in model.layers:
        if sequential and isinstance(layer, InputLayer):
            continue
        row = [f"{layer.name} ({type(layer).__name__})", _shape_text(layer),
               f"{layer.count_params():,}"]
        if connected:
            refs = []
            for node in layer._inbound_nodes:
                if id(node) in member:
                    refs.extend(f"{t.layer.name}[{t.node.index}][{t.index}]"
                                for t in node.inputs)
            row.append(", ".join(refs))
        rows.append(row)
    widths = [max(len(c), *(len(r[i]) for r in rows)) + 2 if rows else len(c) + 2
              for i, c in enumerate(cols)]
    widths = [max(w, m) for w, m in zip(widths, (29, 26, 10, 20))]
    total = sum(widths) + 1
    if line_length:
        total = max(total, int(line_length))

    def fmt(cells: list[str]) -> str:
        return " " + "".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    trainable = sum(w.size for w in model.trainable_weights)
    all_w = model.weights
    n_all = sum(w.size for w in all_w)
    bytes_all = sum(w.size * w.dtype.itemsize for w in all_w)
    bytes_tr = sum(w.size * w.dtype.itemsize for w in model.trainable_weights)
    lines = [f'Model: "{model.name}"', "_" * total, fmt(cols), "=" * total]
    lines.extend(fmt(r) for r in rows)
    lines += [
        "=" * total,
        f"Total params: {n_all:,} ({format_bytes(bytes_all)})",
        f"Trainable params: {trainable:,} ({format_bytes(bytes_tr)})",
        f"Non-trainable params: {n_all - trainable:,} ({format_bytes(bytes_all - bytes_tr)})",
        "_" * total,
    ]
    return "\n".join(lines)
