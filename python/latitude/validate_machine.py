"""The machines a validation compares with (latitude validate): the one its injected runs
see and the one its traced runs saw.

An injected run's calls do the injector's work (timestamps, release decisions), a traced
run's calls the tracer's; the two cost different amounts per message (on the development VM
o = 516 ns under the injector, 306 ns under the tracer). The ΔL grid is predicted with the
injector's machine, calibrated under the injector at ΔL = 0 (or --machine). The ΔL = 0 check
of each trace against its own traced run asks whether the model reproduces the run it was
made from, so it prices the trace with the machine that run saw: calibrated under the tracer
(or --traced-machine). With the injector's machine instead, CG's traced runs came out 1.7-2.1 %
short, with the tracer's within +0.1 to +0.5 % (3 traces, docs/validation.md).

`opts` is validate's ValidateOptions (machine, traced_machine, calib_* fields).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from latitude import inject, loggp_fit, protocol_fit, tracer
from latitude.errors import InputError
from latitude.outputs import write_text


def machine_params(launch: inject.Launch, opts, outdir: Path):
    """(Params, path of the machine file, (measurements, fit, protocol classes) or None): --machine, or
    calibrate under the injector."""
    from latitude import calibrate
    from latitude.params import Params

    if opts.machine:
        return Params.from_machine(opts.machine), Path(opts.machine), None
    m, command, f, classes = _calibrated(
        launch, opts, injector_lib=inject.build_with_spinner(launch, inject.INJECT_LIB)
    )
    path = outdir / "machine.toml"
    samples = outdir / "machine.samples.csv"
    calibrate.write_samples(m.runs or [m], str(samples))
    inject.log(classes.notes[-1])
    text = loggp_fit.to_toml(protocol_fit.written_fit(f, classes), command, injector=True, samples=samples.name)
    write_text(path, text + "".join(f"{line}\n" for line in classes.toml()), "machine file")
    return Params.from_machine(str(path)), path, (m, f, classes)


def _calibrated(launch: inject.Launch, opts, injector_lib=None, tracer_lib=None):
    """Measure with the application's own launcher (ranks 0 and 1, placed as its ranks are),
    under the injector or the tracer, and fit: (measurements, command, fit, protocol size
    classes — e.g. a rendezvous set-up beyond L, when the calibration shows them)."""
    from latitude import calibrate

    calib_launch = inject.Launch(launcher_part(launch.argv), launch.family, launch.info)
    m, command = calibrate.measure(
        calib_launch,
        opts.calib_sizes or calibrate.DEFAULT_SIZES,
        opts.calib_batches,
        opts.calib_iters,
        injector_lib,
        repeat=opts.calib_repeat,
        tracer_lib=tracer_lib,
    )
    f = loggp_fit.fit(m)
    # the ΔL grid is added to L, so an L not separable from the tools' own per-message work
    # is run with L = 0 (and said so) rather than stopping the validation
    if loggp_fit.require_identified(f, allow_zero=True):
        inject.log("warning: " + f.notes[-1])
    return m, command, f, protocol_fit.fit_classes(m, f)


def launcher_part(argv: list[str]) -> list[str]:
    """argv up to the program: the first later word that is an executable file (a path or
    a name on PATH) and not the value of an option."""
    for i in range(1, len(argv)):
        a = argv[i]
        if a.startswith("-") or "=" in a:
            continue
        path = a if os.sep in a else shutil.which(a)
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return argv[:i]
    raise InputError(
        " ".join(argv),
        "cannot tell where the program starts in the launch command (give --machine, or the program as a path)",
    )


def traced_machine_params(launch: inject.Launch, opts, outdir: Path, injected):
    """(Params, where they came from) for the ΔL = 0 check against the traced runs:
    --traced-machine; else, when validate calibrates itself, a calibration under the tracer
    (DIR/machine-traced.toml); else --machine's (`injected`, the same Params), with a note."""
    from latitude.params import Params

    if opts.traced_machine:
        return Params.from_machine(opts.traced_machine), opts.traced_machine
    if opts.machine:
        return injected, f"{opts.machine} (no --traced-machine: the injected runs' machine)"
    _, command, f, classes = _calibrated(launch, opts, tracer_lib=inject.build_with_spinner(launch, tracer.LIB_NAME))
    path = outdir / "machine-traced.toml"
    text = loggp_fit.to_toml(protocol_fit.written_fit(f, classes), command, tracer=True)
    write_text(path, text + "".join(f"{line}\n" for line in classes.toml()), "machine file")
    return Params.from_machine(str(path)), str(path)
