FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY evaluation ./evaluation
COPY leaderboard ./leaderboard
RUN pip install --no-cache-dir .
COPY . .
RUN DEBUG=1 python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "leaderboard.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3"]
