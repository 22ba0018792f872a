"""The compiled core (the Rust crate `archiver/core`, built by maturin as `archiver._core._core`): bytes in,
Arrow batches out. A package of its own, so that a module using the core depends on the core alone, not on
the package `archiver` around it (which re-exports the API, and so everything)."""

from ._core import *  # noqa: F403  (every function and class of the extension module)
