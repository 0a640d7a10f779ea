//! Key hints that fit the width: the footer's and the replay timeline's.

/// Drop (key, label, rank) hints, highest rank first (rank 0 is never
/// dropped), until "KeyLabel KeyLabel …" fits in `width`.
pub fn drop_to_fit(h: &mut Vec<(&'static str, &'static str, u8)>, width: u16) {
    let len =
        |h: &[(&str, &str, u8)]| -> usize { h.iter().map(|(k, l, _)| k.len() + l.len() + 1).sum() };
    while len(h) > usize::from(width) + 1 {
        let Some(i) = h
            .iter()
            .enumerate()
            .filter(|(_, x)| x.2 > 0)
            .max_by_key(|(_, x)| x.2)
            .map(|(i, _)| i)
        else {
            break;
        };
        h.remove(i);
    }
}
