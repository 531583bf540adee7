"""The command line: parse, load the configuration, call one library function, print.

The only stage that may import every other (it decides, for instance, to run the quick
suite before a build); nothing imports it but the console script.
"""
