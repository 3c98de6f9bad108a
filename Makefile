# `make check` before pushing: exactly what CI runs (.ci/run: the suite under coverage,
# ruff, mypy, lint-imports, the docs site, the build with twine check, the lowest
# versions). `make lint` is its quick part, the pre-commit hooks on every file.
.PHONY: check lint

check:
	./.ci/run

lint:
	python3 -m pre_commit run --all-files
