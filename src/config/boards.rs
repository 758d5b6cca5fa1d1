//! The shipped profiles in board/ must always parse cleanly.

use super::parse_bytes;

const BOARDS: &[(&str, &str)] = &[
    ("board/bubba2.toml", include_str!("../../board/bubba2.toml")),
    ("board/wndr3700.toml", include_str!("../../board/wndr3700.toml")),
    ("board/wndr3700-router.toml", include_str!("../../board/wndr3700-router.toml")),
    ("board/sparc-hme.toml", include_str!("../../board/sparc-hme.toml")),
    ("board/qemu-malta.toml", include_str!("../../board/qemu-malta.toml")),
    ("board/reference.toml", include_str!("../../board/reference.toml")),
    ("tests/profiles/netns-board.toml", include_str!("../../tests/profiles/netns-board.toml")),
];

#[test]
fn shipped_profiles_parse_without_warnings() {
    for (file, text) in BOARDS {
        let loaded = parse_bytes(file, text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert!(loaded.warnings.is_empty(), "{file}: {:?}", loaded.warnings);
        let stem = file.rsplit('/').next().unwrap_or(file).trim_end_matches(".toml");
        assert_eq!(loaded.profile.board.name.as_str(), stem, "{file}: [board] name");
    }
}
