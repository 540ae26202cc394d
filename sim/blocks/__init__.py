"""Golden models of the RTL blocks: the same integer arithmetic as ``ahasd.hw``, pure Python.

The RTL imports their parameter classes; they import nothing of the RTL side.
"""
