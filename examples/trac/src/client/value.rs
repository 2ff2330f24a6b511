//! Conversions between XML-RPC values and Rust/JSON values.
//!
//! Decoding helpers return `Result<_, String>`: the string describes what was
//! wrong and becomes the `detail` of a [`TracError::MalformedResponse`](super::TracError).

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use dxr::Value;

/// An XML-RPC struct as decoded by `dxr`.
pub(crate) type Struct = BTreeMap<String, Value>;

/// Short description of a value for error messages.
pub(crate) fn describe(v: &Value) -> String {
    let json = to_json(v).to_string();
    let mut cut: String = json.chars().take(120).collect();
    if cut.len() < json.len() {
        cut.push('…');
    }
    cut
}

pub(crate) fn as_struct<'a>(v: &'a Value, what: &str) -> Result<&'a Struct, String> {
    match v {
        Value::Struct(s) => Ok(s),
        other => Err(format!(
            "{what}: expected a struct, got {}",
            describe(other)
        )),
    }
}

pub(crate) fn as_array<'a>(v: &'a Value, what: &str) -> Result<&'a [Value], String> {
    match v {
        Value::Array(a) => Ok(a),
        other => Err(format!(
            "{what}: expected an array, got {}",
            describe(other)
        )),
    }
}

pub(crate) fn as_i32(v: &Value, what: &str) -> Result<i32, String> {
    match v {
        Value::Integer(i) => Ok(*i),
        Value::Long(l) => {
            i32::try_from(*l).map_err(|_| format!("{what}: integer {l} out of range"))
        }
        other => Err(format!(
            "{what}: expected an integer, got {}",
            describe(other)
        )),
    }
}

pub(crate) fn as_string(v: &Value, what: &str) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        other => Err(format!(
            "{what}: expected a string, got {}",
            describe(other)
        )),
    }
}

/// Booleans arrive as `boolean`, or as integers 0/1 from older code paths.
pub(crate) fn as_bool(v: &Value, what: &str) -> Result<bool, String> {
    match v {
        Value::Boolean(b) => Ok(*b),
        Value::Integer(i) => Ok(*i != 0),
        Value::String(s) if s == "0" || s == "1" => Ok(s == "1"),
        other => Err(format!(
            "{what}: expected a boolean, got {}",
            describe(other)
        )),
    }
}

pub(crate) fn as_datetime(v: &Value, what: &str) -> Result<DateTime<Utc>, String> {
    match v {
        Value::DateTime(dt) => Ok(NaiveDateTime::from(*dt).and_utc()),
        other => Err(format!(
            "{what}: expected a dateTime, got {}",
            describe(other)
        )),
    }
}

/// Trac marks an unset date with `0` (or an empty string / nil).
pub(crate) fn as_opt_datetime(v: &Value, what: &str) -> Result<Option<DateTime<Utc>>, String> {
    match v {
        Value::Integer(0) | Value::Boolean(false) | Value::Nil => Ok(None),
        Value::String(s) if s.is_empty() => Ok(None),
        other => as_datetime(other, what).map(Some),
    }
}

pub(crate) fn member<'a>(s: &'a Struct, key: &str, what: &str) -> Result<&'a Value, String> {
    s.get(key)
        .ok_or_else(|| format!("{what}: member {key:?} missing"))
}

pub(crate) fn member_string(s: &Struct, key: &str, what: &str) -> Result<String, String> {
    as_string(member(s, key, what)?, &format!("{what}.{key}"))
}

/// A member that may be absent; absent and empty both become "".
pub(crate) fn member_string_or_empty(s: &Struct, key: &str, what: &str) -> Result<String, String> {
    match s.get(key) {
        None => Ok(String::new()),
        Some(v) => to_plain_string(v)
            .ok_or_else(|| format!("{what}.{key}: expected text, got {}", describe(v))),
    }
}

/// Scalar values as text: strings as they are, numbers and booleans in
/// decimal, dates in RFC 3339. Structs, arrays and binary data give `None`.
pub(crate) fn to_plain_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Integer(i) => Some(i.to_string()),
        Value::Long(l) => Some(l.to_string()),
        Value::Boolean(b) => Some(if *b { "1" } else { "0" }.to_string()),
        Value::Double(d) => Some(d.to_string()),
        Value::DateTime(dt) => Some(NaiveDateTime::from(*dt).and_utc().to_rfc3339()),
        Value::Nil => Some(String::new()),
        _ => None,
    }
}

/// A Rust date as an XML-RPC `dateTime.iso8601` (UTC, whole seconds).
pub fn datetime_value(t: DateTime<Utc>) -> Value {
    Value::DateTime(dxr::DateTime::from(t.naive_utc()))
}

/// Converts any XML-RPC value to JSON: dates become RFC 3339 strings,
/// binary data becomes base64 text, nil becomes null.
pub fn to_json(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::Integer(i) => J::from(*i),
        Value::Long(l) => J::from(*l),
        Value::Boolean(b) => J::from(*b),
        Value::String(s) => J::from(s.as_str()),
        Value::Double(d) => serde_json::Number::from_f64(*d).map_or(J::Null, J::Number),
        Value::DateTime(dt) => J::from(NaiveDateTime::from(*dt).and_utc().to_rfc3339()),
        Value::Base64(bytes) => J::from(base64_encode(bytes)),
        Value::Struct(members) => J::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), to_json(v)))
                .collect(),
        ),
        Value::Array(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Nil => J::Null,
        // `dxr::Value` is non-exhaustive; a future kind has no JSON form yet
        _ => J::Null,
    }
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Builds an XML-RPC struct of strings.
pub(crate) fn string_struct<'a>(
    pairs: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> Value {
    Value::Struct(
        pairs
            .into_iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn json_conversion_covers_all_kinds() {
        let t = Utc.with_ymd_and_hms(2030, 1, 2, 3, 4, 5).unwrap();
        let v = Value::Array(vec![
            Value::Integer(7),
            Value::Boolean(true),
            Value::String("x".into()),
            datetime_value(t),
            Value::Base64(b"hello \x00\xff".to_vec()),
            Value::Nil,
            Value::Struct([("k".to_string(), Value::Double(1.5))].into()),
        ]);
        assert_eq!(
            to_json(&v),
            serde_json::json!([7, true, "x", "2030-01-02T03:04:05+00:00", "aGVsbG8gAP8=", null, {"k": 1.5}])
        );
    }

    #[test]
    fn optional_dates() {
        assert_eq!(as_opt_datetime(&Value::Integer(0), "due").unwrap(), None);
        let t = Utc.with_ymd_and_hms(2020, 5, 6, 7, 8, 9).unwrap();
        assert_eq!(as_opt_datetime(&datetime_value(t), "due").unwrap(), Some(t));
        assert!(
            as_opt_datetime(&Value::Integer(3), "due")
                .unwrap_err()
                .contains("due")
        );
    }

    #[test]
    fn base64_padding() {
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"f"), "Zg==");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_encode(b"foo"), "Zm9v");
    }
}
