"""HTTP resources: inbound. (To be completed.)"""

from __future__ import annotations

from flask_smorest import Blueprint

inbound_blp = Blueprint("inbound", __name__, description="inbound")
