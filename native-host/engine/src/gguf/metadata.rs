//! GGUF metadata: typed key/value pairs, including (nested) arrays.
//!
//! Arrays are kept typed (`Vec<u32>`, `Vec<String>`, …) rather than as vectors of [`Value`]s: a
//! Gemma vocabulary is 262 144 strings plus as many scores and token types, and one enum per
//! element would triple the memory and the load time for nothing.

use std::collections::HashMap;
use std::fmt;

use super::reader::Cursor;
use super::GgufError;

/// A GGUF value type id, as written in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
}

impl ValueType {
    fn from_id(id: u32) -> Option<Self> {
        use ValueType::*;
        Some(match id {
            0 => U8,
            1 => I8,
            2 => U16,
            3 => I16,
            4 => U32,
            5 => I32,
            6 => F32,
            7 => Bool,
            8 => String,
            9 => Array,
            10 => U64,
            11 => I64,
            12 => F64,
            _ => return None,
        })
    }

    /// The smallest number of bytes one value of this type takes in the file.
    fn min_size(self) -> u64 {
        use ValueType::*;
        match self {
            U8 | I8 | Bool => 1,
            U16 | I16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 | String => 8,
            Array => 12,
        }
    }

    fn name(self) -> &'static str {
        use ValueType::*;
        match self {
            U8 => "u8",
            I8 => "i8",
            U16 => "u16",
            I16 => "i16",
            U32 => "u32",
            I32 => "i32",
            F32 => "f32",
            Bool => "bool",
            String => "string",
            Array => "array",
            U64 => "u64",
            I64 => "i64",
            F64 => "f64",
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(String),
    Array(Array),
    U64(u64),
    I64(i64),
    F64(f64),
}

/// A metadata array; all elements have one type.
#[derive(Debug, Clone, PartialEq)]
pub enum Array {
    U8(Vec<u8>),
    I8(Vec<i8>),
    U16(Vec<u16>),
    I16(Vec<i16>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    F32(Vec<f32>),
    Bool(Vec<bool>),
    String(Vec<String>),
    Array(Vec<Array>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
}

impl Value {
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::U8(_) => ValueType::U8,
            Value::I8(_) => ValueType::I8,
            Value::U16(_) => ValueType::U16,
            Value::I16(_) => ValueType::I16,
            Value::U32(_) => ValueType::U32,
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::U64(_) => ValueType::U64,
            Value::I64(_) => ValueType::I64,
            Value::F64(_) => ValueType::F64,
        }
    }

    /// Any integer value, widened. Writers disagree on integer widths (u32 vs u64 vs i32 for the
    /// same key), so readers accept any integer that fits.
    pub fn as_i128(&self) -> Option<i128> {
        Some(match *self {
            Value::U8(v) => v.into(),
            Value::I8(v) => v.into(),
            Value::U16(v) => v.into(),
            Value::I16(v) => v.into(),
            Value::U32(v) => v.into(),
            Value::I32(v) => v.into(),
            Value::U64(v) => v.into(),
            Value::I64(v) => v.into(),
            _ => return None,
        })
    }

    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(v) => Some(v.into()),
            Value::F64(v) => Some(v),
            _ => self.as_i128().map(|v| v as f64),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Array> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// A short human form for logs and `models info`: arrays are summarised, long strings cut.
    pub fn summary(&self) -> String {
        match self {
            Value::String(s) if s.chars().count() > 80 => {
                format!("{:?}…", s.chars().take(80).collect::<String>())
            }
            Value::String(s) => format!("{s:?}"),
            Value::Array(a) => format!("[{}; {}]", a.element_type(), a.len()),
            Value::U8(v) => v.to_string(),
            Value::I8(v) => v.to_string(),
            Value::U16(v) => v.to_string(),
            Value::I16(v) => v.to_string(),
            Value::U32(v) => v.to_string(),
            Value::I32(v) => v.to_string(),
            Value::F32(v) => v.to_string(),
            Value::Bool(v) => v.to_string(),
            Value::U64(v) => v.to_string(),
            Value::I64(v) => v.to_string(),
            Value::F64(v) => v.to_string(),
        }
    }
}

impl Array {
    pub fn len(&self) -> usize {
        match self {
            Array::U8(v) => v.len(),
            Array::I8(v) => v.len(),
            Array::U16(v) => v.len(),
            Array::I16(v) => v.len(),
            Array::U32(v) => v.len(),
            Array::I32(v) => v.len(),
            Array::F32(v) => v.len(),
            Array::Bool(v) => v.len(),
            Array::String(v) => v.len(),
            Array::Array(v) => v.len(),
            Array::U64(v) => v.len(),
            Array::I64(v) => v.len(),
            Array::F64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn element_type(&self) -> ValueType {
        match self {
            Array::U8(_) => ValueType::U8,
            Array::I8(_) => ValueType::I8,
            Array::U16(_) => ValueType::U16,
            Array::I16(_) => ValueType::I16,
            Array::U32(_) => ValueType::U32,
            Array::I32(_) => ValueType::I32,
            Array::F32(_) => ValueType::F32,
            Array::Bool(_) => ValueType::Bool,
            Array::String(_) => ValueType::String,
            Array::Array(_) => ValueType::Array,
            Array::U64(_) => ValueType::U64,
            Array::I64(_) => ValueType::I64,
            Array::F64(_) => ValueType::F64,
        }
    }
}

/// The metadata of one GGUF file, in file order, with lookup by key.
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    entries: Vec<(String, Value)>,
    index: HashMap<String, usize>,
}

impl Metadata {
    /// Reads `count` key/value pairs.
    pub(crate) fn read(cursor: &mut Cursor<'_>, count: u64) -> Result<Self, GgufError> {
        // A key is at least a u64 length and a u32 type; refuse counts the file cannot hold.
        cursor.ensure_room(count, 12, &|| format!("{count} metadata entries"))?;
        let mut metadata = Metadata::default();
        for i in 0..count {
            let key = cursor.string(&|| format!("the key of metadata entry {i}"))?;
            let what = || format!("metadata value {key:?}");
            let type_id = cursor.u32(&what)?;
            let ty = ValueType::from_id(type_id).ok_or_else(|| GgufError::Corrupt {
                what: what(),
                reason: format!("unknown value type id {type_id}"),
            })?;
            let value = read_value(cursor, ty, &what, 0)?;
            if metadata.index.contains_key(&key) {
                return Err(GgufError::Corrupt {
                    what: what(),
                    reason: "the key appears twice".into(),
                });
            }
            metadata.index.insert(key.clone(), metadata.entries.len());
            metadata.entries.push((key, value));
        }
        Ok(metadata)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// All entries in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.index.get(key).map(|&i| &self.entries[i].1)
    }

    fn require(&self, key: &str) -> Result<&Value, GgufError> {
        self.get(key)
            .ok_or_else(|| GgufError::MissingKey { key: key.into() })
    }

    fn wrong_type(key: &str, expected: &str, found: &Value) -> GgufError {
        GgufError::WrongType {
            key: key.into(),
            expected: expected.into(),
            found: found.value_type().to_string(),
        }
    }

    /// A string value; a missing key is an error.
    pub fn str(&self, key: &str) -> Result<&str, GgufError> {
        let v = self.require(key)?;
        v.as_str().ok_or_else(|| Self::wrong_type(key, "string", v))
    }

    /// A string value if present (present with another type is an error).
    pub fn opt_str(&self, key: &str) -> Result<Option<&str>, GgufError> {
        self.get(key)
            .map(|v| v.as_str().ok_or_else(|| Self::wrong_type(key, "string", v)))
            .transpose()
    }

    /// An integer value that fits in a u32, whatever integer width the writer chose.
    pub fn u32(&self, key: &str) -> Result<u32, GgufError> {
        let v = self.require(key)?;
        Self::to_u32(key, v)
    }

    pub fn opt_u32(&self, key: &str) -> Result<Option<u32>, GgufError> {
        self.get(key).map(|v| Self::to_u32(key, v)).transpose()
    }

    fn to_u32(key: &str, v: &Value) -> Result<u32, GgufError> {
        v.as_i128()
            .and_then(|i| u32::try_from(i).ok())
            .ok_or_else(|| Self::wrong_type(key, "an integer that fits in u32", v))
    }

    pub fn f32(&self, key: &str) -> Result<f32, GgufError> {
        let v = self.require(key)?;
        v.as_f64()
            .map(|f| f as f32)
            .ok_or_else(|| Self::wrong_type(key, "a number", v))
    }

    pub fn opt_f32(&self, key: &str) -> Result<Option<f32>, GgufError> {
        self.get(key)
            .map(|v| {
                v.as_f64()
                    .map(|f| f as f32)
                    .ok_or_else(|| Self::wrong_type(key, "a number", v))
            })
            .transpose()
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, GgufError> {
        self.get(key)
            .map(|v| v.as_bool().ok_or_else(|| Self::wrong_type(key, "bool", v)))
            .transpose()
    }

    /// An array value; a missing key is an error.
    pub fn array(&self, key: &str) -> Result<&Array, GgufError> {
        let v = self.require(key)?;
        v.as_array()
            .ok_or_else(|| Self::wrong_type(key, "array", v))
    }

    pub fn opt_array(&self, key: &str) -> Result<Option<&Array>, GgufError> {
        self.get(key)
            .map(|v| {
                v.as_array()
                    .ok_or_else(|| Self::wrong_type(key, "array", v))
            })
            .transpose()
    }
}

const MAX_ARRAY_NESTING: usize = 8;

fn read_value(
    cursor: &mut Cursor<'_>,
    ty: ValueType,
    what: &dyn Fn() -> String,
    depth: usize,
) -> Result<Value, GgufError> {
    Ok(match ty {
        ValueType::U8 => Value::U8(cursor.u8(what)?),
        ValueType::I8 => Value::I8(cursor.i8(what)?),
        ValueType::U16 => Value::U16(cursor.u16(what)?),
        ValueType::I16 => Value::I16(cursor.i16(what)?),
        ValueType::U32 => Value::U32(cursor.u32(what)?),
        ValueType::I32 => Value::I32(cursor.i32(what)?),
        ValueType::F32 => Value::F32(cursor.f32(what)?),
        ValueType::Bool => Value::Bool(read_bool(cursor, what)?),
        ValueType::String => Value::String(cursor.string(what)?),
        ValueType::U64 => Value::U64(cursor.u64(what)?),
        ValueType::I64 => Value::I64(cursor.i64(what)?),
        ValueType::F64 => Value::F64(cursor.f64(what)?),
        ValueType::Array => Value::Array(read_array(cursor, what, depth)?),
    })
}

fn read_bool(cursor: &mut Cursor<'_>, what: &dyn Fn() -> String) -> Result<bool, GgufError> {
    match cursor.u8(what)? {
        0 => Ok(false),
        1 => Ok(true),
        b => Err(GgufError::Corrupt {
            what: what(),
            reason: format!("a bool must be 0 or 1, found {b}"),
        }),
    }
}

fn read_array(
    cursor: &mut Cursor<'_>,
    what: &dyn Fn() -> String,
    depth: usize,
) -> Result<Array, GgufError> {
    if depth >= MAX_ARRAY_NESTING {
        return Err(GgufError::Corrupt {
            what: what(),
            reason: format!("arrays nested more than {MAX_ARRAY_NESTING} deep"),
        });
    }
    let type_id = cursor.u32(what)?;
    let ty = ValueType::from_id(type_id).ok_or_else(|| GgufError::Corrupt {
        what: what(),
        reason: format!("unknown array element type id {type_id}"),
    })?;
    let len = cursor.u64(what)?;
    cursor.ensure_room(len, ty.min_size(), what)?;
    let n = len as usize;
    macro_rules! many {
        ($variant:ident, $read:ident) => {{
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(cursor.$read(what)?);
            }
            Array::$variant(v)
        }};
    }
    Ok(match ty {
        ValueType::U8 => Array::U8(cursor.take(n, what)?.to_vec()),
        ValueType::I8 => many!(I8, i8),
        ValueType::U16 => many!(U16, u16),
        ValueType::I16 => many!(I16, i16),
        ValueType::U32 => many!(U32, u32),
        ValueType::I32 => many!(I32, i32),
        ValueType::F32 => many!(F32, f32),
        ValueType::U64 => many!(U64, u64),
        ValueType::I64 => many!(I64, i64),
        ValueType::F64 => many!(F64, f64),
        ValueType::String => many!(String, string),
        ValueType::Bool => {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(read_bool(cursor, what)?);
            }
            Array::Bool(v)
        }
        ValueType::Array => {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(read_array(cursor, what, depth + 1)?);
            }
            Array::Array(v)
        }
    })
}
