# One image for every process: web (gunicorn), bot (runbot), worker (rqworker) and migrate.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Runtime dependencies first (a layer that only changes with pyproject.toml/constraints.txt),
# at the exact versions pinned in constraints.txt.
COPY pyproject.toml constraints.txt ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install -c constraints.txt -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

COPY . .

# Static files are collected with production settings (hashed names for whitenoise); the
# values given here only let the settings load and are not kept in the image.
RUN DEBUG=false SECRET_KEY=collectstatic-only ALLOWED_HOSTS=localhost \
        python manage.py collectstatic --noinput --verbosity 0

RUN useradd --create-home --uid 1000 app && chown -R app:app /app
USER app

EXPOSE 8000
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--access-logfile", "-"]
