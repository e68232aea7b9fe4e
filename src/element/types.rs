//! The one table of element-type facts.
//!
//! Everything the library knows about an element type (tag, name, bit width,
//! tier, how its bits become a number) is in [`TYPES`]. Sizes are derived from
//! the bit width in `size.rs`; decoding lives in `decode.rs` and is driven by
//! the [`Encoding`] column.

use std::ffi::CStr;
use std::fmt;

/// How the stored bits of one element map to a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// IEEE-754-style binary float with `exp` exponent bits and `man` mantissa
    /// bits (bias `2^(exp-1) - 1`), with the given treatment of the all-ones
    /// exponent.
    MiniFloat {
        exp: u32,
        man: u32,
        bias: i32,
        specials: Specials,
    },
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// IEEE binary128.
    F128,
    /// Unsigned exponent-only scale factor: `2^(bits - 127)` for codes
    /// 0x01..=0xFE. Codes 0x00 and 0xFF are reserved (NaN in OCP MX) and the
    /// format forbids them as data (`element-types.md`).
    E8M0,
    /// Two's-complement signed integer.
    Int,
    /// Unsigned integer.
    UInt,
    /// One bit, 1 = true.
    Bool,
    /// Two parts (real, imaginary) of the given float encoding each.
    Complex,
}

/// What the all-ones exponent means in a [`Encoding::MiniFloat`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Specials {
    /// IEEE: mantissa 0 is infinity, anything else NaN.
    Ieee,
    /// OCP E4M3 ("fn"): only exponent and mantissa all ones is NaN; no infinity.
    NanOnlyAllOnes,
    /// OCP MX sub-byte floats: every pattern is finite.
    None,
}

/// The facts about one element type.
#[derive(Debug, PartialEq, Eq)]
pub struct TypeInfo {
    /// The `type_tag` byte.
    pub tag: u8,
    /// The specification's name, e.g. `float32`, NUL-terminated for C.
    pub name_c: &'static CStr,
    /// Storage bits per element (1, 2, 4, 6, 8, 16, 32, 64 or 128).
    pub bits: u32,
    /// Specification tier (1: must support, 2: optional).
    pub tier: u8,
    /// How the bits become a value.
    pub encoding: Encoding,
}

impl TypeInfo {
    /// The specification's name, e.g. `float32`.
    pub fn name(&self) -> &'static str {
        self.name_c.to_str().unwrap_or("?")
    }

    /// True when elements are packed several per byte (bool, 2-, 4-, 6-bit).
    pub const fn is_sub_byte(&self) -> bool {
        self.bits < 8
    }

    /// Bytes one element takes when copied out by a lookup: the element's own
    /// bytes for whole-byte types, one byte (bit pattern in the low bits) for
    /// sub-byte types.
    pub const fn lookup_bytes(&self) -> usize {
        if self.is_sub_byte() {
            1
        } else {
            (self.bits / 8) as usize
        }
    }

    /// Byte codes the format forbids as data values of this type: a reader
    /// that meets one must treat the tensor as invalid. Only float8_e8m0 has
    /// any (0x00 and 0xFF).
    pub const fn forbidden_codes(&self) -> &'static [u8] {
        match self.encoding {
            Encoding::E8M0 => &[0x00, 0xFF],
            _ => &[],
        }
    }

    /// True when a value of this type is a real number (everything but complex).
    pub const fn is_real(&self) -> bool {
        !matches!(self.encoding, Encoding::Complex)
    }
}

const fn mini(exp: u32, man: u32, specials: Specials) -> Encoding {
    Encoding::MiniFloat {
        exp,
        man,
        bias: (1 << (exp - 1)) - 1,
        specials,
    }
}

const fn t(tag: u8, name_c: &'static CStr, bits: u32, tier: u8, encoding: Encoding) -> TypeInfo {
    TypeInfo {
        tag,
        name_c,
        bits,
        tier,
        encoding,
    }
}

/// Every element type of the Hurray format (FORMAT-NOTES.md, element types).
pub static TYPES: [TypeInfo; 26] = [
    t(0x01, c"float16", 16, 1, mini(5, 10, Specials::Ieee)),
    t(0x02, c"bfloat16", 16, 1, mini(8, 7, Specials::Ieee)),
    t(0x03, c"float32", 32, 1, Encoding::F32),
    t(0x04, c"float64", 64, 1, Encoding::F64),
    t(0x10, c"int8", 8, 1, Encoding::Int),
    t(0x11, c"uint8", 8, 1, Encoding::UInt),
    t(0x12, c"int16", 16, 1, Encoding::Int),
    t(0x13, c"uint16", 16, 1, Encoding::UInt),
    t(0x14, c"int32", 32, 1, Encoding::Int),
    t(0x15, c"uint32", 32, 1, Encoding::UInt),
    t(0x16, c"int64", 64, 1, Encoding::Int),
    t(0x17, c"uint64", 64, 1, Encoding::UInt),
    t(0x20, c"bool", 1, 1, Encoding::Bool),
    t(
        0x40,
        c"float8_e4m3",
        8,
        2,
        mini(4, 3, Specials::NanOnlyAllOnes),
    ),
    t(0x41, c"float8_e5m2", 8, 2, mini(5, 2, Specials::Ieee)),
    t(0x42, c"float8_e8m0", 8, 2, Encoding::E8M0),
    t(0x43, c"float4_e2m1", 4, 2, mini(2, 1, Specials::None)),
    t(0x44, c"float6_e2m3", 6, 2, mini(2, 3, Specials::None)),
    t(0x45, c"float6_e3m2", 6, 2, mini(3, 2, Specials::None)),
    t(0x46, c"float128", 128, 2, Encoding::F128),
    t(0x48, c"int4", 4, 2, Encoding::Int),
    t(0x49, c"uint4", 4, 2, Encoding::UInt),
    t(0x4A, c"int2", 2, 2, Encoding::Int),
    t(0x4B, c"uint2", 2, 2, Encoding::UInt),
    t(0x50, c"complex64", 64, 2, Encoding::Complex),
    t(0x51, c"complex128", 128, 2, Encoding::Complex),
];

/// What a type tag is, according to the specification's tag space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagClass {
    /// A type this library knows.
    Known(&'static TypeInfo),
    /// 0x00 or 0xFF: invalid everywhere, refused even in permissive mode.
    Invalid,
    /// 0x47 or 0x80–0xEF: reserved for future versions of the specification.
    Reserved,
    /// 0xF0–0xFE: implementation-private extension (needs an extension-type
    /// section this library does not read).
    Private,
    /// A tag in the Tier 1/Tier 2 ranges that no type is assigned to.
    Unassigned,
}

impl TagClass {
    /// Classify a tag.
    pub fn of(tag: u8) -> TagClass {
        if let Some(info) = type_info(tag) {
            return TagClass::Known(info);
        }
        match tag {
            0x00 | 0xFF => TagClass::Invalid,
            0x47 | 0x80..=0xEF => TagClass::Reserved,
            0xF0..=0xFE => TagClass::Private,
            _ => TagClass::Unassigned,
        }
    }
}

impl fmt::Display for TagClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

impl TagClass {
    /// What the class is, in words (a known type: its name).
    pub fn describe(&self) -> &'static str {
        match self {
            TagClass::Known(info) => info.name(),
            TagClass::Invalid => "invalid (0x00 and 0xFF are never valid)",
            TagClass::Reserved => "reserved for future versions of the Hurray specification",
            TagClass::Private => {
                "a private extension type (0xF0-0xFE), which needs an extension-type section \
                 this library does not support"
            }
            TagClass::Unassigned => "not assigned to any element type",
        }
    }
}

/// The facts for `tag`, when it is a known type.
pub fn type_info(tag: u8) -> Option<&'static TypeInfo> {
    TYPES.iter().find(|t| t.tag == tag)
}

/// The specification's name of a tag, or `None` for an unknown tag.
pub fn type_name(tag: u8) -> Option<&'static str> {
    type_info(tag).map(|t| t.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_unique_and_classified() {
        for (i, a) in TYPES.iter().enumerate() {
            for b in &TYPES[i + 1..] {
                assert_ne!(a.tag, b.tag);
                assert_ne!(a.name_c, b.name_c);
            }
            assert_eq!(TagClass::of(a.tag), TagClass::Known(a));
        }
        let known = (0..=255u8).filter(|&t| type_info(t).is_some()).count();
        assert_eq!(known, TYPES.len());
        assert_eq!(TagClass::of(0x00), TagClass::Invalid);
        assert_eq!(TagClass::of(0xFF), TagClass::Invalid);
        assert_eq!(TagClass::of(0x47), TagClass::Reserved);
        for tag in 0x80..=0xEF {
            assert_eq!(TagClass::of(tag), TagClass::Reserved);
        }
        for tag in 0xF0..=0xFE {
            assert_eq!(TagClass::of(tag), TagClass::Private);
        }
        assert_eq!(TagClass::of(0x05), TagClass::Unassigned);
        assert_eq!(TagClass::of(0x21), TagClass::Unassigned);
        assert_eq!(TagClass::of(0x7F), TagClass::Unassigned);
    }

    #[test]
    fn tier_1_is_exactly_the_core_types() {
        let tier1: Vec<u8> = TYPES
            .iter()
            .filter(|t| t.tier == 1)
            .map(|t| t.tag)
            .collect();
        assert_eq!(
            tier1,
            [0x01, 0x02, 0x03, 0x04, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x20]
        );
    }

    #[test]
    fn biases_follow_the_spec() {
        let bias = |tag| match type_info(tag).unwrap().encoding {
            Encoding::MiniFloat { bias, .. } => bias,
            _ => panic!("not a mini float"),
        };
        assert_eq!(bias(0x01), 15);
        assert_eq!(bias(0x02), 127);
        assert_eq!(bias(0x40), 7);
        assert_eq!(bias(0x41), 15);
        assert_eq!(bias(0x43), 1);
        assert_eq!(bias(0x44), 1);
        assert_eq!(bias(0x45), 3);
    }
}
