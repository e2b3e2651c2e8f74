"""Reading one location's events from an OTF2 archive through the OTF2 library's own reader
(the ``otf2`` package's low-level binding), one callback per event.

:func:`read_location` streams a location's event file in batches and hands every event to a
handler object as ``handler.on_<kind>(time, position, *fields)``; the handler defines the
kinds it wants (``on_enter``, ``on_mpi_send``, …). Kinds without a method are decoded by
the library and skipped without a Python call. The library's own error printing is routed
into the message of the exception instead (:func:`library_errors`), so a damaged archive is
one line, not a page of ``[OTF2]`` output.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib

from latitude.errors import InputError

# Event kind -> the callback setter's name in the OTF2 C API (OTF2_EvtReaderCallbacks_Set*).
KINDS = {
    "enter": "Enter",
    "leave": "Leave",
    "mpi_send": "MpiSend",
    "mpi_isend": "MpiIsend",
    "mpi_isend_complete": "MpiIsendComplete",
    "mpi_irecv_request": "MpiIrecvRequest",
    "mpi_recv": "MpiRecv",
    "mpi_irecv": "MpiIrecv",
    "mpi_request_test": "MpiRequestTest",
    "mpi_request_cancelled": "MpiRequestCancelled",
    "mpi_collective_end": "MpiCollectiveEnd",
    "nonblocking_collective_request": "NonBlockingCollectiveRequest",
    "nonblocking_collective_complete": "NonBlockingCollectiveComplete",
    "measurement_on_off": "MeasurementOnOff",
    "mpi_mrecv": "MpiMrecv",
    "mpi_imrecv_request": "MpiImrecvRequest",
    "mpi_imrecv": "MpiImrecv",
}
# Events Latitude cannot map, reported by name (one-sided communication, threading).
UNMAPPED = [
    "RmaWinCreate",
    "RmaPut",
    "RmaGet",
    "RmaAtomic",
    "RmaCollectiveBegin",
    "RmaGroupSync",
    "RmaRequestLock",
    "RmaSync",
    "ThreadFork",
    "ThreadTeamBegin",
    "ThreadCreate",
    "ThreadBegin",
    "OmpFork",
]

BATCH = 1 << 16

_messages: list[str] = []
_keep: list = []


def _lib():
    try:
        conf = importlib.import_module("_otf2.Config").conf
        cbs = importlib.import_module("_otf2.EvtReaderCallbacks")
        import _otf2
    except ImportError as err:
        raise InputError(
            None,
            f"reading OTF2 archives needs the OTF2 library's Python binding ({err}): `pip install otf2` "
            "(wheels for Python 3.9-3.11; elsewhere build OTF2 with --enable-python-bindings)",
        ) from None
    return _otf2, conf, cbs


def _install_error_hook(conf) -> None:
    """OTF2 prints its errors to stderr; keep them for our message instead."""
    if _keep:
        return
    libc = ctypes.CDLL(None)
    libc.vsnprintf.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p]
    proto = ctypes.CFUNCTYPE(
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_uint64,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_void_p,
    )

    def hook(_user, _file, _line, _func, code, fmt, va):
        buf = ctypes.create_string_buffer(512)
        try:
            libc.vsnprintf(buf, len(buf), fmt, va)
            _messages.append(buf.value.decode(errors="replace"))
        except Exception:  # noqa: BLE001 - never raise into C
            _messages.append("")
        return code

    cb = proto(hook)
    register = conf.lib.OTF2_Error_RegisterCallback
    register.argtypes = [proto, ctypes.c_void_p]
    register.restype = ctypes.c_void_p
    register(cb, None)
    _keep.append(cb)


@contextlib.contextmanager
def library_errors(where: str, what: str):
    """Turn an OTF2 library error into one InputError line: `what` plus the library's words."""
    _otf2, conf, _ = _lib()
    _install_error_hook(conf)
    _messages.clear()
    try:
        yield
    except _otf2.Error as err:
        said = next((m for m in reversed(_messages) if m), "")
        detail = f"{said} ({err})" if said else str(err)
        raise InputError(where, f"{what}: {detail}") from None


def open_reader(anchor: str):
    """The archive's reader with its global definitions read (otf2.reader.Reader)."""
    _lib()
    import otf2

    with library_errors(anchor, "not a readable OTF2 archive"):
        try:
            return otf2.reader.Reader(anchor)
        except (otf2.error.TraceReaderError, KeyError, TypeError, ValueError, AttributeError) as err:
            raise InputError(anchor, f"bad OTF2 definitions: {err}") from None


def creator(reader) -> str:
    _otf2, _, _ = _lib()
    with contextlib.suppress(Exception):
        return _otf2.Reader_GetCreator(reader.handle) or ""
    return ""


def open_event_files(reader) -> None:
    _otf2, _, _ = _lib()
    h = reader.handle
    for step in (_otf2.Reader_OpenDefFiles, _otf2.Reader_OpenEvtFiles):
        with contextlib.suppress(_otf2.Error):
            step(h)


def _callbacks(handler, cbs_mod, conf, counts: dict):
    """The callback table for `handler`; unmapped kinds are counted into `counts`."""
    _otf2 = importlib.import_module("_otf2")
    table = _otf2.EvtReaderCallbacks_New()
    keep = []

    def guard(fn):
        def call(_loc, time, pos, _user, _attrs, *args):
            if handler.error is not None:
                return 1
            try:
                fn(time, pos, *args)
            except InputError as err:
                handler.error = err
                return 1  # OTF2_CALLBACK_INTERRUPT
            return 0

        return call

    for kind, cname in KINDS.items():
        fn = getattr(handler, "on_" + kind, None)
        if fn is None:
            continue
        fp = getattr(cbs_mod, "_EvtReaderCallback_FP_" + cname)(guard(fn))
        getattr(conf.lib, f"OTF2_EvtReaderCallbacks_Set{cname}Callback")(table, fp)
        keep.append(fp)
    for cname in UNMAPPED:

        def count(_loc, _time, pos, _user, _attrs, *args, _name=cname):
            counts[_name] = counts.get(_name, 0) + 1
            return 0

        fp = getattr(cbs_mod, "_EvtReaderCallback_FP_" + cname)(count)
        getattr(conf.lib, f"OTF2_EvtReaderCallbacks_Set{cname}Callback")(table, fp)
        keep.append(fp)
    return table, keep


def read_location(reader, location: int, handler, where: str, progress=None) -> dict:
    """Stream the events of `location` into `handler`; returns counts of unmapped event
    kinds. `handler.error` (an InputError set by a callback) stops the reading and is raised."""
    _otf2, conf, cbs_mod = _lib()
    h = reader.handle
    handler.error = None
    unmapped: dict[str, int] = {}
    table, keep = _callbacks(handler, cbs_mod, conf, unmapped)
    with library_errors(where, "the archive's events cannot be read (damaged or truncated?)"):
        with contextlib.suppress(_otf2.Error):
            defs = _otf2.Reader_GetDefReader(h, location)
            if defs:
                _otf2.Reader_ReadAllLocalDefinitions(h, defs)
                _otf2.Reader_CloseDefReader(h, defs)
        events = _otf2.Reader_GetEvtReader(h, location)
        try:
            _otf2.Reader_RegisterEvtCallbacks(h, events, table, None)
            while True:
                try:
                    n = _otf2.Reader_ReadLocalEvents(h, events, BATCH)
                except _otf2.Error:
                    if handler.error is not None:
                        raise handler.error from None
                    raise
                if handler.error is not None:
                    raise handler.error
                if progress is not None:
                    progress(n)
                if n < BATCH:
                    break
        finally:
            _otf2.Reader_CloseEvtReader(h, events)
            _otf2.EvtReaderCallbacks_Delete(table)
            del keep
    return unmapped
