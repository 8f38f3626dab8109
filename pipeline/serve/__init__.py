"""What reads the published file: the report, its exports and charts, the plan and the gate, the SQL shell."""
