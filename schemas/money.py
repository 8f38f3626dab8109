"""The DECIMAL types money is stored in: amounts to 12 places (a cache-hit token costs $0.0000003, seven), prices
per million tokens to 12 as well (a request's cost from them is exact at 18 places and kept to 12)."""

from sqlalchemy import Numeric

Money = Numeric(38, 12)
PricePerMillion = Numeric(24, 12)
