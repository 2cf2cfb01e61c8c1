// The target that builds the test binaries' precompiled header
// (tests/support/test_pch.hpp); the test binaries reuse it. It has no
// tests of its own.
