"""HTTP resources: mail. (To be completed.)"""

from __future__ import annotations

from flask_smorest import Blueprint

mail_blp = Blueprint("mail", __name__, description="mail")
