"""zoo.layers"""
