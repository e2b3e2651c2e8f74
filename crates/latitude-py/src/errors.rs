//! The exceptions Latitude reports as one line, without a traceback. They are defined here, so
//! the core and the Python code raise the same classes (`latitude.errors` re-exports them).
//!
//! `InputError(where, what)` is bad user input, shown as `where: what` (just `what` when
//! `where` is None); `where` and `what` stay attributes, as strings with control characters
//! escaped (`\n`, `\x1b`). A `create_exception!` type has
//! BaseException's constructor, which would keep `(where, what)` as its arguments and print
//! them as a tuple. So `__new__` (which Python calls with the class first, as every `__new__`)
//! builds the exception from the one-line message and sets the two attributes, and `__init__`
//! leaves that message in place.

use latitude_core::text::escape_controls;
use latitude_core::Error;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

create_exception!(latitude._core, LatitudeError, PyException, "An error Latitude reports as one line, without a traceback.");
create_exception!(
    latitude._core,
    InputError,
    LatitudeError,
    "Bad user input (a file, a command-line value, an environment setting): `InputError(where, what)`, \
     shown as `where: what`. `where` is `path:line`, `path` or an option name such as `-L` (or None)."
);

/// `InputError.__new__(cls, where, what)`; with one argument it is `what` (pickling passes the
/// message); with none an empty message (tblib's exception pickling, which Dask installs, calls
/// `__new__(cls)` and restores the attributes afterwards).
#[pyfunction]
#[pyo3(name = "__new__", signature = (cls, place=None, what=None))]
fn input_error_new<'py>(cls: &Bound<'py, PyType>, place: Option<Bound<'py, PyAny>>, what: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    let none = || py.None().into_bound(py);
    let (place, what) = match (place, what) {
        (Some(place), Some(what)) => (place, what),
        (Some(what), None) => (none(), what),
        (None, what) => (none(), what.unwrap_or_else(|| pyo3::types::PyString::new(py, "").into_any())),
    };
    // Input shown in a message cannot break the line or drive the terminal.
    let place = if place.is_none() { None } else { Some(escape_controls(&place.str()?.to_string_lossy())) };
    let what = escape_controls(&what.str()?.to_string_lossy());
    let message = match &place {
        Some(place) => format!("{place}: {what}"),
        None => what.clone(),
    };
    let err = py.get_type::<PyException>().getattr("__new__")?.call1((cls, message))?;
    err.setattr("where", place)?;
    err.setattr("what", what)?;
    Ok(err)
}

/// `InputError.__init__`: the arguments were taken by `__new__`.
#[pyfunction]
#[pyo3(name = "__init__", signature = (*_args, **_kwargs))]
fn input_error_init(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) {}

/// Add the exception classes to the module (InputError with its constructor).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let input = py.get_type::<InputError>();
    input.setattr("__new__", wrap_pyfunction!(input_error_new, m)?)?;
    input.setattr("__init__", wrap_pyfunction!(input_error_init, m)?)?;
    m.add("LatitudeError", py.get_type::<LatitudeError>())?;
    m.add("InputError", input)?;
    Ok(())
}

/// A core error as `InputError(location or None, message)`.
pub fn input_error(py: Python<'_>, e: Error) -> PyErr {
    let place = if e.location.is_empty() { None } else { Some(e.location) };
    match py.get_type::<InputError>().call1((place, e.message)) {
        Ok(err) => PyErr::from_value(err),
        Err(err) => err,
    }
}
