//! The NUMA view's layout and labels (numa.rs).
use super::*;

#[test]
fn rates_fit_three_cells() {
    for (v, s) in [
        (0.0, "·"),
        (0.03, "<.1"),
        (1.0, "1.0"),
        (9.96, "10"),
        (384.0, "384"),
        (1499.0, "1k"),
        (12_345.0, "12k"),
        (3.2e6, "3M"),
    ] {
        assert_eq!(rate3(v), s, "{v}");
        assert!(rate3(v).chars().count() <= 3);
    }
}

#[test]
fn arrow_heads_point_the_right_way() {
    assert_eq!(head_glyph(1.0, 0.0), '→');
    assert_eq!(head_glyph(-1.0, 0.0), '←');
    assert_eq!(head_glyph(0.0, 1.0), '↓');
    assert_eq!(head_glyph(0.0, -1.0), '↑');
    assert_eq!(head_glyph(2.0, -1.0), '↗');
}

#[test]
fn labels_land_in_their_cell() {
    // what Canvas does with a label at (x, y) for bounds [0, w-1] x [0, h-1]
    let (w, h) = (80.0_f64, 20.0_f64);
    for cy in 0..20u16 {
        for cx in [0u16, 7, 79] {
            let (x, y) = (f64::from(cx), h - 1.0 - f64::from(cy));
            let col = (x * (w - 1.0) / (w - 1.0)) as u16;
            let row = ((h - 1.0 - y) * (h - 1.0) / (h - 1.0)) as u16;
            assert_eq!((col, row), (cx, cy));
        }
    }
}
