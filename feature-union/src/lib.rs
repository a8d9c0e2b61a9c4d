//! Nothing to call: this crate exists for its manifest. Every member of the workspace
//! has it as a dev-dependency, so that every test, example and `-p` build resolves each
//! shared dependency with the same features and reuses one compiled copy of it
//! (scripts/feature-union.py writes the manifest and says why).
