// Finds the outside programs some tests drive, so that a test whose program is
// absent is reported as ignored, with the reason and the install hint, instead of
// failing (included by wfs-server's build script and by the workspace root's).
//
// | cfg | set when | tests |
// |---|---|---|
// | `wfs_test_redis` | `redis-server` is `$WFS_TEST_REDIS_SERVER` or on `PATH` | the shared rate limit and sign-in throttle |
// | `wfs_test_chromium` | a Chromium is `$WFS_CHROMIUM` or on `PATH` (`chromium`, `chromium-browser`, `google-chrome`) | the API reference in a browser |
//
// `CI_REQUIRE_TEST_PROGRAMS=1` (what `.ci/run` sets, since it installs them all,
// possibly while this runs) sets both without looking: a missing program then fails
// its tests. (Not a `WFS_*` name: `scripts/readme-check.sh` unsets those, and a
// changed value would rebuild what the tests built.) The build only affects tests; the crate itself is the same either way.
// When a program is missing, the `PATH` directories are watched, so installing it is
// noticed by the next build.

use std::env;
use std::path::{Path, PathBuf};

/// `(cfg, environment variable naming the program, names looked up on PATH)`.
const PROGRAMS: [(&str, &str, &[&str]); 2] = [
    ("wfs_test_redis", "WFS_TEST_REDIS_SERVER", &["redis-server"]),
    (
        "wfs_test_chromium",
        "WFS_CHROMIUM",
        &["chromium", "chromium-browser", "google-chrome"],
    ),
];

fn main() {
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=CI_REQUIRE_TEST_PROGRAMS");
    let required = env::var_os("CI_REQUIRE_TEST_PROGRAMS").is_some_and(|v| v == "1");
    let path_dirs: Vec<PathBuf> = env::var_os("PATH")
        .map(|p| env::split_paths(&p).collect())
        .unwrap_or_default();
    let mut watch_path = false;
    for (cfg, variable, names) in PROGRAMS {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        println!("cargo::rerun-if-env-changed={variable}");
        if required {
            println!("cargo::rustc-cfg={cfg}");
            continue;
        }
        match find(variable, names, &path_dirs) {
            Some(found) => {
                println!("cargo::rerun-if-changed={}", found.display());
                println!("cargo::rustc-cfg={cfg}");
            }
            None => watch_path = true,
        }
    }
    if watch_path {
        for dir in path_dirs.iter().filter(|d| d.is_dir()) {
            println!("cargo::rerun-if-changed={}", dir.display());
        }
    }
}

/// The program `$variable` names, else the first of `names` in a `PATH` directory.
fn find(variable: &str, names: &[&str], path_dirs: &[PathBuf]) -> Option<PathBuf> {
    if let Some(named) = env::var_os(variable) {
        let named = PathBuf::from(named);
        return is_program(&named).then_some(named);
    }
    names.iter().find_map(|name| {
        path_dirs
            .iter()
            .map(|dir| dir.join(name))
            .find(|candidate| is_program(candidate))
    })
}

fn is_program(path: &Path) -> bool {
    path.is_file()
}
