"""zoo.models"""
