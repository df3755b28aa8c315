"""The xflydsl Jupyter kernel: ``python -m xflydsl -f CONNECTION_FILE`` serves
one kernel in this interpreter (the kernelspec a pip install brings runs that)."""
