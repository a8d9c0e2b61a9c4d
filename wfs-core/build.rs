//! The list of migrations, generated from the files in `src/persistence/migration/`.
//!
//! A migration is one file, `mYYYYMMDD_NNNNNN_what.rs`, defining `Migration`; sea-orm
//! takes its name from the file stem and applies migrations in name order. Writing that
//! file is the whole change: this build declares each as a module and lists them in
//! order (`$OUT_DIR/migrations.rs`, included by `persistence/migration/mod.rs`), so no
//! second place names it.

use std::{env, fs, path::PathBuf};

const DIR: &str = "src/persistence/migration";

fn main() {
    println!("cargo::rerun-if-changed={DIR}");
    let dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo")).join(DIR);
    let mut steps: Vec<String> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").file_name())
        .filter_map(|name| name.into_string().ok())
        .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
        .filter(|stem| stem.starts_with('m') && stem[1..].starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    steps.sort();
    let mut code = String::new();
    for step in &steps {
        let path = dir.join(format!("{step}.rs"));
        code.push_str(&format!(
            "#[path = {:?}]\nmod {step};\n",
            path.display().to_string()
        ));
    }
    code.push_str("\n/// Every migration, in name order.\nfn generated() -> Vec<Box<dyn MigrationTrait>> {\n    vec![\n");
    for step in &steps {
        code.push_str(&format!("        Box::new({step}::Migration),\n"));
    }
    code.push_str("    ]\n}\n");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    fs::write(out.join("migrations.rs"), code).expect("cannot write migrations.rs");
}
