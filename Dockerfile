# The API image: the package installed from this checkout, config under /app/config.
FROM python:3.11-slim

WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    QDASH_CONFIG_DIR=/app/config \
    QDASH_DATA_DIR=/data

COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir . && mkdir -p /data
COPY config ./config

EXPOSE 5715
CMD ["qdash", "serve", "--host", "0.0.0.0", "--port", "5715"]
