"""hetrt.quantize — static post-training quantization (hetrt/quantize.h)
from Python: one call that sets the quantizer's options, adds the
calibration (and evaluation) input sets, calibrates, writes the QDQ model
and returns what was decided and, with evaluation inputs, the accuracy
report.  docs/quantize.md has the rules (what is quantized, the methods).
"""

import os
from dataclasses import dataclass, field
from typing import List, Optional

from . import _hetrt
from .session import _option_text, default_env, _split_providers


@dataclass
class QuantizationResult:
    """What ``quantize`` decided and measured.

    ``node_count``: nodes quantized.  ``tensors``: one dict per quantized
    activation tensor: name, lo, hi (calibrated range), scale, zero_point
    and, after evaluation, sqnr_db.  ``accuracy``: per model output
    (after evaluation): name, max_abs_error, max_rel_error, cosine,
    min_cosine, top1_total, top1_agree.  ``report``: the library's text
    report (after evaluation).  ``warnings``: the quantizer's warnings."""

    output_path: str
    node_count: int
    tensors: List[dict] = field(default_factory=list)
    accuracy: List[dict] = field(default_factory=list)
    report: Optional[str] = None
    warnings: List[str] = field(default_factory=list)


def _join(value):
    if isinstance(value, str):
        return value
    return ",".join(value)


def quantize(model_path, output_path, calibration=None, *, evaluation=None,
             mode=None, method=None, percentile=None, per_channel=None,
             activation_type=None, exclude_op_types=None, exclude_nodes=None,
             providers=None, options=None, threads=None, progress=None):
    """Quantizes the float model at ``model_path`` into a QDQ model at
    ``output_path``.

    ``calibration``: an iterable of input sets ({name: array}, every
    graph input without an initializer), at least one unless
    ``mode="dynamic"``.  ``evaluation``: input sets held apart for the
    float-vs-quantized comparison (then ``accuracy`` and ``report`` are
    filled).  The keyword options are the quantizer's keys: ``mode``
    ("static" or "dynamic"), ``method`` ("minmax", "percentile",
    "entropy"), ``percentile`` (kept share in percent), ``per_channel``
    (bool), ``activation_type`` ("uint8" or "int8"),
    ``exclude_op_types`` and ``exclude_nodes`` (lists or comma-separated;
    node names may be fnmatch globs).  ``providers``, ``options`` and
    ``threads`` configure the sessions that run calibration.
    ``progress(phase, done, total)`` is called after each model run.

    Returns a QuantizationResult.  Raises hetrt.Error with the library's
    message (an unknown option or malformed value names it)."""
    names, pairs = _split_providers(providers)
    for key, value in (options or {}).items():
        pairs.append((str(key), _option_text(key, value)))
    q = _hetrt.quantizer_create(default_env(), os.fspath(model_path), names,
                                threads, pairs)
    settings = {
        "mode": mode, "method": method, "percentile": percentile,
        "per_channel": per_channel, "activation_type": activation_type,
        "exclude_op_types": None if exclude_op_types is None else _join(exclude_op_types),
        "exclude_nodes": None if exclude_nodes is None else _join(exclude_nodes),
    }
    for key, value in settings.items():
        if value is not None:
            q.set(key, _option_text(key, value))
    for feeds in calibration or ():
        q.add_input(False, feeds)
    evaluated = False
    for feeds in evaluation or ():
        q.add_input(True, feeds)
        evaluated = True
    if progress is not None:
        q.set_progress(progress)
    q.calibrate()
    q.save(os.fspath(output_path))
    result = QuantizationResult(output_path=os.fspath(output_path),
                                node_count=q.node_count())
    result.tensors = [dict(name=n, lo=lo, hi=hi, scale=s, zero_point=zp)
                      for n, lo, hi, s, zp in q.tensors()]
    if evaluated:
        result.report = q.evaluate()
        result.accuracy = q.accuracy()
        for t, db in zip(result.tensors, q.sqnr()):
            t["sqnr_db"] = db
    result.warnings = q.warnings()
    return result
