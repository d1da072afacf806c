//! JSON with JavaScript's semantics: values as `JSON.parse` builds them and text as
//! `JSON.stringify` writes it.
//!
//! Strings are WTF-8 (UTF-8 that may also hold lone surrogates, which JavaScript strings can),
//! numbers are doubles, a duplicate key keeps its first position and its last value, and keys
//! that are array indices come first in ascending order, as JavaScript orders properties.

pub mod canonical;
mod parse;
pub mod scan;
pub mod walk;
mod write;

use std::borrow::Cow;

pub use parse::{MAX_DEPTH, ParseError, parse_value, unescape_into};
pub use scan::{
    LineScan, ScanError, ScanOptions, Scanned, Span, scan_line, scan_line_at, scan_line_into, scan_line_plain,
    scan_line_with, scan_line_with_blocks, with_line_scan,
};
pub use write::{to_json, write_json, write_number, write_string, write_string_body};

/// A JavaScript string as WTF-8 bytes, borrowed where possible.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct JsStr<'a>(pub Cow<'a, [u8]>);

impl<'a> JsStr<'a> {
    /// Borrows bytes that are already WTF-8.
    pub fn borrowed(bytes: &'a [u8]) -> Self {
        JsStr(Cow::Borrowed(bytes))
    }
    /// Owns a Rust string.
    pub fn owned(s: impl Into<String>) -> JsStr<'static> {
        JsStr(Cow::Owned(s.into().into_bytes()))
    }
    /// The WTF-8 bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
    /// The text for display; lone surrogates become U+FFFD.
    pub fn to_str_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }
    /// Detaches the string from its input.
    pub fn into_owned(self) -> JsStr<'static> {
        JsStr(Cow::Owned(self.0.into_owned()))
    }
    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for JsStr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.to_str_lossy())
    }
}

impl PartialEq<str> for JsStr<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for JsStr<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

/// A JSON value as JavaScript holds it.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value<'a> {
    /// `null`
    #[default]
    Null,
    /// `true` or `false`
    Bool(bool),
    /// Every number is a double; `1e400` is infinity, as in JavaScript.
    Number(f64),
    /// A string.
    String(JsStr<'a>),
    /// An array.
    Array(Vec<Value<'a>>),
    /// An object with JavaScript's property order.
    Object(Object<'a>),
}

/// An object's properties in JavaScript's enumeration order, without duplicate keys.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object<'a> {
    props: Vec<(JsStr<'a>, Value<'a>)>,
}

impl<'a> Object<'a> {
    /// An empty object.
    pub fn new() -> Self {
        Object { props: Vec::new() }
    }

    /// Builds an object from properties in source order: a repeated key keeps its first
    /// position and takes the last value, and array-index keys move first in ascending order.
    pub fn from_source_order(mut props: Vec<(JsStr<'a>, Value<'a>)>) -> Self {
        if props.len() > 1 {
            dedup_keep_first_position(&mut props);
            if props.iter().any(|(k, _)| array_index(k.as_bytes()).is_some()) {
                // A stable sort keeps the remaining keys in insertion order.
                props.sort_by_key(|(k, _)| array_index(k.as_bytes()).map_or(u64::MAX, u64::from));
            }
        }
        Object { props }
    }

    /// Sets a property as JavaScript assignment does (existing keys keep their position).
    pub fn insert(&mut self, key: impl Into<JsStr<'a>>, value: Value<'a>) {
        let key = key.into();
        match self.props.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => {
                self.props.push((key, value));
                if array_index(self.props[self.props.len() - 1].0.as_bytes()).is_some() {
                    let props = std::mem::take(&mut self.props);
                    *self = Object::from_source_order(props);
                }
            }
        }
    }

    /// The value of a property.
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.props.iter().find(|(k, _)| k.as_bytes() == key.as_bytes()).map(|(_, v)| v)
    }

    /// Whether the property exists (its value may be `null`).
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Removes a property.
    pub fn remove(&mut self, key: &str) -> Option<Value<'a>> {
        let i = self.props.iter().position(|(k, _)| k.as_bytes() == key.as_bytes())?;
        Some(self.props.remove(i).1)
    }

    /// Properties in order.
    pub fn iter(&self) -> impl Iterator<Item = (&JsStr<'a>, &Value<'a>)> {
        self.props.iter().map(|(k, v)| (k, v))
    }

    /// Number of properties.
    pub fn len(&self) -> usize {
        self.props.len()
    }

    /// Whether there are no properties.
    pub fn is_empty(&self) -> bool {
        self.props.is_empty()
    }

    /// Detaches the object from its input.
    pub fn into_owned(self) -> Object<'static> {
        Object { props: self.props.into_iter().map(|(k, v)| (k.into_owned(), v.into_owned())).collect() }
    }
}

impl<'a> From<&'a str> for JsStr<'a> {
    fn from(s: &'a str) -> Self {
        JsStr::borrowed(s.as_bytes())
    }
}

impl From<String> for JsStr<'static> {
    fn from(s: String) -> Self {
        JsStr::owned(s)
    }
}

fn dedup_keep_first_position(props: &mut Vec<(JsStr<'_>, Value<'_>)>) {
    let n = props.len();
    let mut first: ahash::AHashMap<Vec<u8>, usize> = ahash::AHashMap::new();
    let has_dup = if n <= 16 {
        (1..n).any(|i| props[..i].iter().any(|(k, _)| *k == props[i].0))
    } else {
        let mut seen = ahash::AHashSet::with_capacity(n);
        props.iter().any(|(k, _)| !seen.insert(k.as_bytes()))
    };
    if !has_dup {
        return;
    }
    let mut out: Vec<(JsStr<'_>, Value<'_>)> = Vec::with_capacity(n);
    for (k, v) in props.drain(..) {
        match first.get(k.as_bytes()) {
            Some(&i) => out[i].1 = v,
            None => {
                first.insert(k.as_bytes().to_vec(), out.len());
                out.push((k, v));
            }
        }
    }
    *props = out;
}

/// The numeric value of a canonical array-index key (`"0"`, `"17"`, never `"01"`).
fn array_index(key: &[u8]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key[0] == b'0') {
        return None;
    }
    if !key.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = key.iter().fold(0, |a, d| a * 10 + u64::from(d - b'0'));
    (n < u64::from(u32::MAX)).then_some(n as u32)
}

impl<'a> Value<'a> {
    /// A string value from Rust text.
    pub fn str(s: impl Into<JsStr<'a>>) -> Self {
        Value::String(s.into())
    }
    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&JsStr<'a>> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    /// The number, if this is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }
    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&[Value<'a>]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    /// A property of an object value.
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.as_object()?.get(key)
    }
    /// JavaScript truthiness.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::String(s) => !s.is_empty(),
            Value::Array(_) | Value::Object(_) => true,
        }
    }
    /// Detaches the value from its input.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(b),
            Value::Number(n) => Value::Number(n),
            Value::String(s) => Value::String(s.into_owned()),
            Value::Array(a) => Value::Array(a.into_iter().map(Value::into_owned).collect()),
            Value::Object(o) => Value::Object(o.into_owned()),
        }
    }
}

/// JavaScript's `ToNumber` for a property value (`undefined` is `NaN`, `null` is 0, strings are
/// trimmed and parsed, objects and arrays are `NaN`).
pub fn to_number(v: Option<&Value<'_>>) -> f64 {
    match v {
        None => f64::NAN,
        Some(Value::Null) => 0.0,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::Number(n)) => *n,
        Some(Value::String(s)) => string_to_number(s.as_bytes()),
        Some(_) => f64::NAN,
    }
}

/// `ToNumber` of a string: trimmed as JavaScript trims, empty is 0, unparsable is `NaN`.
pub(crate) fn string_to_number(s: &[u8]) -> f64 {
    let t = crate::text::js_trim(s);
    if t.is_empty() { 0.0 } else { std::str::from_utf8(t).ok().and_then(|t| t.parse().ok()).unwrap_or(f64::NAN) }
}
