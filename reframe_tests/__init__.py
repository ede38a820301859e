"""scalebench's ReFrame checks. A package, so that checks share reframe_tests/base.py."""
