//! The numeric types of VTK data arrays, shared by the legacy and XML readers: their names in
//! both dialects, their sizes, and decoding of one binary value.

use super::{Cursor, Endian};
use crate::error::Result;

/// A VTK scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarType {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl ScalarType {
    /// The type of a legacy VTK header (`float`, `double`, `int`, `vtktypeint64`, …); `None`
    /// for unknown names and for `bit` and `string`, which the reader does not support.
    /// `vtkIdType` is 4 bytes in legacy files (VTK writes ids as `int`).
    pub(crate) fn from_legacy(name: &str) -> Option<ScalarType> {
        use ScalarType::*;
        Some(match name.to_ascii_lowercase().as_str() {
            "char" | "vtktypeint8" => I8,
            "unsigned_char" | "vtktypeuint8" => U8,
            "short" | "vtktypeint16" => I16,
            "unsigned_short" | "vtktypeuint16" => U16,
            "int" | "vtkidtype" | "vtktypeint32" => I32,
            "unsigned_int" | "vtktypeuint32" => U32,
            "long" | "vtktypeint64" => I64,
            "unsigned_long" | "vtktypeuint64" => U64,
            "float" | "vtktypefloat32" => F32,
            "double" | "vtktypefloat64" => F64,
            _ => return None,
        })
    }

    /// The type of a VTU `DataArray` (`Float32`, `Int64`, `UInt8`, …).
    pub(crate) fn from_xml(name: &str) -> Option<ScalarType> {
        use ScalarType::*;
        Some(match name {
            "Int8" | "Char" => I8,
            "UInt8" | "UChar" => U8,
            "Int16" | "Short" => I16,
            "UInt16" | "UShort" => U16,
            "Int32" | "Int" => I32,
            "UInt32" | "UInt" => U32,
            "Int64" | "Long" | "LongLong" | "IdType" => I64,
            "UInt64" | "ULong" | "ULongLong" => U64,
            "Float32" | "Float" => F32,
            "Float64" | "Double" => F64,
            _ => return None,
        })
    }

    /// Bytes per value.
    pub(crate) fn size(self) -> usize {
        use ScalarType::*;
        match self {
            I8 | U8 => 1,
            I16 | U16 => 2,
            I32 | U32 | F32 => 4,
            I64 | U64 | F64 => 8,
        }
    }

    /// Decodes one value from exactly `self.size()` bytes.
    pub(crate) fn decode(self, b: &[u8], endian: Endian) -> Value {
        use ScalarType::*;
        macro_rules! num {
            ($t:ty) => {{
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                match endian {
                    Endian::Little => <$t>::from_le_bytes(a),
                    Endian::Big => <$t>::from_be_bytes(a),
                }
            }};
        }
        match self {
            I8 => Value::Int(i128::from(num!(i8))),
            U8 => Value::Int(i128::from(num!(u8))),
            I16 => Value::Int(i128::from(num!(i16))),
            U16 => Value::Int(i128::from(num!(u16))),
            I32 => Value::Int(i128::from(num!(i32))),
            U32 => Value::Int(i128::from(num!(u32))),
            I64 => Value::Int(i128::from(num!(i64))),
            U64 => Value::Int(i128::from(num!(u64))),
            F32 => Value::Real(f64::from(num!(f32))),
            F64 => Value::Real(num!(f64)),
        }
    }

    /// Reads the next text token of `c` as a value of this type: integers exactly,
    /// `Float32` as an `f32` widened (the value a VTK reader stores), `Float64` as an `f64`.
    /// Errors (naming `what` and the line) at the end of the text or on a token that is not
    /// a number of the type.
    pub(crate) fn parse_next(self, c: &mut Cursor, what: &str) -> Result<Value> {
        use ScalarType::*;
        Ok(match self {
            F32 => Value::Real(f64::from(c.parse::<f32>(what)?)),
            F64 => Value::Real(c.parse::<f64>(what)?),
            _ => Value::Int(c.parse::<i128>(what)?),
        })
    }
}

/// One decoded value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    Int(i128),
    Real(f64),
}

impl Value {
    /// The value as a real number.
    pub(crate) fn real(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Real(r) => r,
        }
    }

    /// The value as an integer; `None` for a real that is not a whole number.
    pub(crate) fn int(self) -> Option<i128> {
        match self {
            Value::Int(i) => Some(i),
            Value::Real(r) if r.fract() == 0.0 && r.abs() < 1e30 => Some(r as i128),
            Value::Real(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sizes_and_decoding() {
        assert_eq!(ScalarType::from_legacy("double"), Some(ScalarType::F64));
        assert_eq!(
            ScalarType::from_legacy("vtktypeint64"),
            Some(ScalarType::I64)
        );
        assert_eq!(ScalarType::from_legacy("bit"), None);
        assert_eq!(ScalarType::from_xml("UInt8"), Some(ScalarType::U8));
        assert_eq!(ScalarType::from_xml("String"), None);
        assert_eq!(ScalarType::I16.size(), 2);
        let v = ScalarType::I32.decode(&(-7i32).to_be_bytes(), Endian::Big);
        assert_eq!(v, Value::Int(-7));
        let v = ScalarType::F32.decode(&0.1f32.to_le_bytes(), Endian::Little);
        assert_eq!(v.real(), f64::from(0.1f32));
        let mut c = Cursor::new("t", b"0.1 1.5");
        let v = ScalarType::F32.parse_next(&mut c, "x").unwrap();
        assert_eq!(v, Value::Real(f64::from(0.1f32)));
        let e = ScalarType::U8.parse_next(&mut c, "type").unwrap_err();
        assert_eq!(e.to_string(), "t: line 1: expected type, found `1.5`");
        assert_eq!(Value::Real(3.0).int(), Some(3));
        assert_eq!(Value::Real(3.5).int(), None);
    }
}
