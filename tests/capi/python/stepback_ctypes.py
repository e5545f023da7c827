"""ctypes declarations of stepback's C API (capi/include/stepback/stepback.h) for Python, on
libstepback.so: the structs, enums and function prototypes that tests/capi/python use (the
retry machine, the stack, downloads, names).

    import stepback_ctypes as sb
    lib = sb.load("/usr/local/lib/libstepback.so")

Objects are opaque storage of STEPBACK_<X>_SIZE bytes in uint64 words (8-byte aligned, as
the header asks); pass ctypes.sizeof(obj) as the size, and never copy an object once it is
initialised (it points into itself). The C side keeps the function pointers it is given
(options.on_event, a sink's write and restart): keep the CFUNCTYPE objects referenced for as
long as the object lives, or the interpreter frees the thunk the library will call.
"""

import ctypes
from ctypes import (CFUNCTYPE, POINTER, Structure, c_bool, c_char_p, c_int, c_int32, c_int64,
                    c_size_t, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p)

# stepback_status (the values this module's users name).
OK = 0
E_ERROR = 1
E_INVALID_ARGUMENT = 4
E_TLS_VERIFY = 10
E_STORAGE = 64
E_STATE = 65
E_FILE = 66

# stepback_outcome
OUTCOME_SUCCESS = 0
OUTCOME_RETRIES_EXHAUSTED = 1
OUTCOME_TERMINAL_STATUS = 3
OUTCOME_CANCELLED = 8

# stepback_failure
FAILURE_NONE = 0
FAILURE_CONNECT = 2

# stepback_next_kind
NEXT_SEND = 0
NEXT_WAIT_IO = 1
NEXT_WAIT_UNTIL = 2
NEXT_DONE = 3

# stepback_event_kind
EVENT_ATTEMPT = 0
EVENT_RESPONSE = 1
EVENT_ERROR = 2
EVENT_WAIT = 3
EVENT_RESUME = 4
EVENT_PROGRESS = 5
EVENT_DONE = 11

NEVER = 2**63 - 1  # STEPBACK_NEVER
UNKNOWN = 2**64 - 1  # STEPBACK_UNKNOWN

BUDGET_SIZE = 16
RETRY_SIZE = 256
STACK_SIZE = 128 * 1024
DOWNLOAD_SIZE = 192 * 1024
POLICY_EXTRA_STATUSES = 8


def _opaque(name, size):
    """A struct of `size` bytes of uint64 words, as the header declares each object."""
    return type(name, (Structure,), {"_fields_": [("opaque", c_uint64 * (size // 8))]})


Budget = _opaque("Budget", BUDGET_SIZE)
Retry = _opaque("Retry", RETRY_SIZE)
Stack = _opaque("Stack", STACK_SIZE)
Download = _opaque("Download", DOWNLOAD_SIZE)

# C enums are ints on every ABI the library is built for.
_enum = c_int


class Next(Structure):
    _fields_ = [("kind", _enum), ("fd", c_int), ("want_read", c_bool), ("want_write", c_bool),
                ("at_ms", c_int64), ("outcome", _enum)]


class Policy(Structure):
    _fields_ = [("initial_delay_ms", c_uint32), ("multiplier", c_uint32), ("jitter", _enum),
                ("jitter_range_ms", c_uint32), ("max_backoff_ms", c_uint32),
                ("max_retries", c_uint32), ("total_deadline_ms", c_uint64),
                ("honor_server_delay", c_bool), ("max_server_delay_ms", c_uint32),
                ("retry_all", c_bool), ("extra_retryable", c_uint16 * POLICY_EXTRA_STATUSES)]


class Header(Structure):
    _fields_ = [("name", c_char_p), ("value", c_char_p)]


class Event(Structure):
    _fields_ = [("kind", _enum), ("attempt", c_uint32), ("http_status", c_uint16),
                ("failure", _enum), ("outcome", _enum), ("bytes", c_uint64), ("total", c_uint64),
                ("rate", c_uint64), ("wait_ms", c_int64), ("at_ms", c_int64),
                ("message", c_char_p)]


EVENT_FN = CFUNCTYPE(None, c_void_p, POINTER(Event))
SINK_WRITE_FN = CFUNCTYPE(c_bool, c_void_p, c_uint64, POINTER(c_uint8), c_size_t)
SINK_RESTART_FN = CFUNCTYPE(c_bool, c_void_p)
CHECKPOINT_SAVE_FN = CFUNCTYPE(c_bool, c_void_p, POINTER(c_uint8), c_size_t, c_uint64)


class Sink(Structure):
    _fields_ = [("write", SINK_WRITE_FN), ("restart", SINK_RESTART_FN), ("context", c_void_p)]


class CheckpointSink(Structure):
    _fields_ = [("save", CHECKPOINT_SAVE_FN), ("context", c_void_p)]


class Options(Structure):
    _fields_ = [("policy", POINTER(Policy)), ("max_redirects", c_uint32),
                ("idempotency", _enum), ("max_time_ms", c_int64), ("max_rate", c_uint64),
                ("user_agent", c_char_p), ("headers", POINTER(Header)),
                ("header_count", c_size_t), ("on_event", EVENT_FN),
                ("event_context", c_void_p)]


class Result(Structure):
    _fields_ = [("outcome", _enum), ("http_status", c_uint16), ("error", _enum),
                ("attempts", c_uint32), ("message", c_char_p)]


# name: (restype, argtypes)
_PROTOTYPES = {
    "stepback_strerror": (c_char_p, [_enum]),
    "stepback_outcome_name": (c_char_p, [_enum]),
    "stepback_monotonic_ms": (c_int64, []),
    "stepback_poll_wait": (c_bool, [POINTER(Next), c_int64]),
    "stepback_policy_default": (None, [POINTER(Policy)]),
    "stepback_policy_valid": (c_bool, [POINTER(Policy)]),
    "stepback_profile_name": (c_char_p, []),
    "stepback_budget_init": (_enum, [c_void_p, c_size_t, c_uint32, c_uint32]),
    "stepback_retry_init": (_enum, [c_void_p, c_size_t, POINTER(Policy), c_uint64, c_bool,
                                    c_void_p]),
    "stepback_retry_step": (_enum, [c_void_p, c_int64, POINTER(Next)]),
    "stepback_retry_report": (_enum, [c_void_p, c_int64, c_uint16, _enum, c_int64,
                                      POINTER(Next)]),
    "stepback_retry_retries": (c_uint32, [c_void_p]),
    "stepback_stack_init": (_enum, [c_void_p, c_size_t, c_char_p]),
    "stepback_stack_message": (c_char_p, [c_void_p]),
    "stepback_stack_destroy": (None, [c_void_p]),
    "stepback_options_default": (None, [POINTER(Options)]),
    "stepback_download_init": (_enum, [c_void_p, c_size_t, c_void_p, POINTER(Options)]),
    "stepback_download_start_file": (_enum, [c_void_p, c_char_p, c_char_p, c_char_p]),
    "stepback_download_start_sink": (_enum, [c_void_p, c_char_p, POINTER(Sink),
                                             POINTER(CheckpointSink), POINTER(c_uint8),
                                             c_size_t]),
    "stepback_download_step": (_enum, [c_void_p, c_int64, POINTER(Next)]),
    "stepback_download_pause": (None, [c_void_p, c_int64]),
    "stepback_download_resume": (_enum, [c_void_p, c_int64]),
    "stepback_download_paused": (c_bool, [c_void_p]),
    "stepback_download_result": (None, [c_void_p, POINTER(Result)]),
    "stepback_download_delivered": (c_uint64, [c_void_p]),
    "stepback_download_message": (c_char_p, [c_void_p]),
    "stepback_download_destroy": (None, [c_void_p]),
}


def load(path):
    """libstepback.so at `path` (a ctypes.CDLL) with the prototypes above declared, so that
    ctypes converts and checks the arguments. Object arguments are c_void_p: pass
    ctypes.byref(obj), or an address (the storage check's tests pass odd ones)."""
    lib = ctypes.CDLL(path)
    for name, (restype, argtypes) in _PROTOTYPES.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib
