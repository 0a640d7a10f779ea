//! Reading an SVG screenshot back as the screen it shows (tests).

/// The screen an SVG screenshot shows, rebuilt from its glyph positions
/// (every <tspan> carries the x of each of its characters).
pub fn svg_screen(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let cols = (root.attribute("width").unwrap().parse::<f32>().unwrap() / 8.4).round() as usize;
    let rows = (root.attribute("height").unwrap().parse::<f32>().unwrap() / 16.0).round() as usize;
    let mut grid = vec![vec![' '; cols]; rows];
    for text in root.children().filter(|n| n.has_tag_name("text")) {
        let y: f32 = text.attribute("y").unwrap().parse().unwrap();
        let row = ((y - 12.5) / 16.0).round() as usize;
        for span in text.children().filter(|n| n.has_tag_name("tspan")) {
            let xs: Vec<usize> = span
                .attribute("x")
                .unwrap()
                .split(' ')
                .map(|x| (x.parse::<f32>().unwrap() / 8.4).round() as usize)
                .collect();
            let chars: Vec<char> = span.text().unwrap_or("").chars().collect();
            if xs.len() == chars.len() {
                for (x, c) in xs.into_iter().zip(chars) {
                    grid[row][x] = c;
                }
            } else {
                // one glyph of several characters at one x
                for (k, c) in chars.into_iter().enumerate() {
                    if xs[0] + k < cols {
                        grid[row][xs[0] + k] = c;
                    }
                }
            }
        }
    }
    grid.into_iter()
        .map(|r| r.into_iter().collect::<String>().trim_end().to_string())
        .collect()
}
