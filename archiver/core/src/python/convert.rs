//! JSON values between Python and the core: Python's decoded JSON (dict, list, str, int, float, bool,
//! None) into a `Value`, and back. Used by the stages' test surfaces, which hand the core what the
//! Python code it replaces was handed.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::json::{Map, Number, Value};

/// A Python JSON value as a `Value`; TypeError for anything JSON cannot hold.
pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if let Ok(text) = obj.cast::<PyString>() {
        return Ok(Value::String(text.to_str()?.into()));
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(small) = obj.extract::<i64>() {
            return Ok(Value::Number(Number::Int(small)));
        }
        if let Ok(large) = obj.extract::<u64>() {
            return Ok(Value::Number(Number::UInt(large)));
        }
        return Ok(Value::Number(Number::Big(digits_of(obj)?.into())));
    }
    if let Ok(float) = obj.cast::<PyFloat>() {
        return Ok(Value::Number(Number::Float(float.value())));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity_and_hasher(dict.len(), Default::default());
        for (key, item) in dict.iter() {
            let key = key
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("an object key is not a string"))?;
            map.insert(key.to_str()?.into(), to_value(&item)?);
        }
        return Ok(Value::Object(map));
    }
    if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
        return obj
            .try_iter()?
            .map(|item| to_value(&item?))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    Err(PyTypeError::new_err(format!(
        "not a JSON value: {}",
        obj.get_type().name()?
    )))
}

/// A `Value` as the Python object the standard library's JSON decoding would give.
pub fn to_py(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::Null => py.None(),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any().unbind(),
        Value::Number(Number::Int(n)) => n.into_pyobject(py)?.into_any().unbind(),
        Value::Number(Number::UInt(n)) => n.into_pyobject(py)?.into_any().unbind(),
        Value::Number(Number::Big(digits)) => int_of(py, digits)?,
        Value::Number(Number::Float(f)) => PyFloat::new(py, *f).into_any().unbind(),
        Value::String(text) => PyString::new(py, text).into_any().unbind(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any().unbind()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(&**key, to_py(py, item)?)?;
            }
            dict.into_any().unbind()
        }
    })
}

/// The Python int of an integer's decimal digits, however many: `int` refuses more digits than
/// `sys.get_int_max_str_digits()` (4300 by default), `decimal.Decimal` converts any number exactly.
fn int_of(py: Python<'_>, digits: &str) -> PyResult<Py<PyAny>> {
    let int = py.get_type::<PyInt>();
    if let Ok(value) = int.call1((digits,)) {
        return Ok(value.unbind());
    }
    let decimal = py.import("decimal")?.getattr("Decimal")?.call1((digits,))?;
    Ok(int.call1((decimal,))?.unbind())
}

/// The decimal digits of a Python int, however many (as `int_of`).
fn digits_of(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(text) = obj.str() {
        return Ok(text.to_str()?.to_owned());
    }
    let decimal = obj
        .py()
        .import("decimal")?
        .getattr("Decimal")?
        .call1((obj,))?;
    Ok(decimal.str()?.to_str()?.to_owned())
}
