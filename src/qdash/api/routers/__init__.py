"""One router per resource; ``app.py`` includes them."""
