FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# The processes' environment, web and workers alike (docs/settings.md): one BLAS thread;
# Arrow allocating from glibc's heap, as numpy does; and that heap kept, not handed back
# to the kernel: a run's arrays come from it whatever their size, and what they free stays
# for the next run rather than being faulted in afresh.
ENV OPENBLAS_NUM_THREADS=1 \
    ARROW_DEFAULT_MEMORY_POOL=system \
    GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296
WORKDIR /app
# A font for the plots' PNG downloads: resvg draws text with the system's fonts, and the
# slim image has none (the SVGs need none: the reader's browser draws their text).
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY evaluation ./evaluation
COPY leaderboard ./leaderboard
COPY rrl ./rrl
RUN pip install --no-cache-dir .
COPY . .
# Production settings need whitenoise's manifest, so collect with DEBUG off (a throwaway
# key: the real one comes from the environment at run time).
RUN DEBUG=0 SECRET_KEY=collectstatic-only-not-a-secret-0123456789abcdefghijklmnopqrstuv \
    ALLOWED_HOSTS=localhost python manage.py collectstatic --noinput
EXPOSE 8000
# --preload: the application (every view, its libraries, the templates) is loaded once in
# gunicorn's master before the workers fork, so no reader waits for it (leaderboard/wsgi.py).
CMD ["gunicorn", "leaderboard.wsgi", "--preload", "--bind", "0.0.0.0:8000", "--workers", "3"]
