//! Format characters that change how the text around them is drawn (bidi
//! overrides and isolates, zero-width and line-separating ones): a thread
//! may name itself with them to make another name appear. The live view
//! spells them out, screenshots and OpenMetrics labels replace them, CSV
//! writes them as escapes — one list for all.

/// Whether code point `n` is one of them.
pub fn is_invisible(n: u32) -> bool {
    matches!(
        n,
        0x00ad | 0x061c | 0x180e | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x2069 | 0xfeff
    )
}
