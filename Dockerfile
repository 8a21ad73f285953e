# One image for every rackem service; the command picks the service:
#   docker run IMAGE serve gateway|table|matchmaker|bot
# PYTHON_IMAGE lets a machine without a registry use a locally built base
# (scripts/containers/build-python-image makes one named python:3.11-slim).
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore
RUN python3 -m venv /opt/rackem
WORKDIR /src
# Dependencies first, in their own layer: a change to the sources alone reuses it.
COPY pyproject.toml README.md ./
RUN python3 -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"], sep="\n")' \
        >requirements.txt \
    && /opt/rackem/bin/pip install -r requirements.txt "setuptools>=68" wheel
COPY rackcore ./rackcore
COPY services ./services
COPY rackem ./rackem
RUN /opt/rackem/bin/pip install --no-deps --no-build-isolation . \
    && /opt/rackem/bin/pip uninstall --yes --quiet setuptools wheel pip \
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
