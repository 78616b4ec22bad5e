# The API image: the package built as a wheel and installed (not editable), so the image runs what
# `pip install` gives a user; the default configuration ships inside the package. /app/config is the
# override directory (docker-compose.yml mounts ./config there), /data the data directory.
FROM python:3.11.11-slim-bookworm AS wheel
WORKDIR /build
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /dist .

FROM python:3.11.11-slim-bookworm
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    QDASH_CONFIG_DIR=/app/config \
    QDASH_DATA_DIR=/data
COPY --from=wheel /dist /dist
RUN pip install --no-cache-dir /dist/*.whl && rm -rf /dist && mkdir -p /data
COPY config ./config

EXPOSE 5715
CMD ["qdash", "serve", "--host", "0.0.0.0", "--port", "5715"]
