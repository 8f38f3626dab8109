"""The DECIMAL types money is stored in: amounts to 12 places (a cache-hit token costs $0.0000003, seven), prices
per million tokens to 6."""

from sqlalchemy import Numeric

Money = Numeric(38, 12)
PricePerMillion = Numeric(18, 6)
