"""The tests, in folders that mirror the package (tests/<part>/test_<module>.py); see docs/layout.md."""
