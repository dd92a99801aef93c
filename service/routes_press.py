"""HTTP resources: press. (To be completed.)"""

from __future__ import annotations

from flask_smorest import Blueprint

press_blp = Blueprint("press", __name__, description="press")
