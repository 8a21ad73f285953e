# One image for every rackem service; the command picks the service:
#   docker run IMAGE serve gateway|table|matchmaker|bot
# The base is pinned by digest (docs/dependencies.md says how to move it); PYTHON_IMAGE lets
# a machine without a registry use a locally built base (scripts/containers/build-python-image
# makes localhost/python:3.11-slim). Python packages come from the lock, hashes checked.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore
RUN python3 -m venv /opt/rackem
WORKDIR /src
# The locked runtime set first, in its own layer: a change to the sources alone reuses it.
COPY requirements/build.txt requirements/runtime.txt requirements/
RUN /opt/rackem/bin/pip install --require-hashes --no-deps \
        -r requirements/build.txt -r requirements/runtime.txt \
    && /opt/rackem/bin/pip check
COPY pyproject.toml README.md LICENSE ./
COPY rackcore ./rackcore
COPY services ./services
COPY rackem ./rackem
RUN /opt/rackem/bin/pip install --no-deps --no-build-isolation . \
    && /opt/rackem/bin/pip uninstall --yes --quiet setuptools pip \
    && /opt/rackem/bin/rackem --help >/dev/null

FROM ${PYTHON_IMAGE}
RUN groupadd --gid 10001 rackem \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin rackem
COPY --from=builder /opt/rackem /opt/rackem
ENV PATH=/opt/rackem/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOST=0.0.0.0
# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /tmp
EXPOSE 8000 50051 50052 50053
ENTRYPOINT ["rackem"]
CMD ["serve", "gateway"]
